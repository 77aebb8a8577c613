"use strict";
// A Vendure plugin of the application's own, as tsc compiles one (experimentalDecorators, emitDecoratorMetadata):
// GreetingResolver serves a shop API query through GreetingService; LegacyExportService is used by nothing.
var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    // eslint-disable-next-line no-cond-assign
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
Object.defineProperty(exports, "__esModule", { value: true });
const common_1 = require("@nestjs/common");
const graphql_1 = require("@nestjs/graphql");
const core_1 = require("@vendure/core");
const graphql_tag_1 = require("graphql-tag");
let GreetingService = class GreetingService {
    greet(name) { return `hello ${name}`; }
};
GreetingService = __decorate([(0, common_1.Injectable)()], GreetingService);
exports.GreetingService = GreetingService;
let LegacyExportService = class LegacyExportService {
    exportAll() { return []; }
};
LegacyExportService = __decorate([(0, common_1.Injectable)()], LegacyExportService);
exports.LegacyExportService = LegacyExportService;
let GreetingResolver = class GreetingResolver {
    constructor(greetings) { this.greetings = greetings; }
    greeting() { return this.greetings.greet("world"); }
};
__decorate([(0, graphql_1.Query)(), __metadata("design:type", Function), __metadata("design:paramtypes", []), __metadata("design:returntype", void 0)], GreetingResolver.prototype, "greeting", null);
GreetingResolver = __decorate([(0, graphql_1.Resolver)(), __metadata("design:paramtypes", [GreetingService])], GreetingResolver);
exports.GreetingResolver = GreetingResolver;
let GreetingPlugin = class GreetingPlugin {};
GreetingPlugin = __decorate([
    (0, core_1.VendurePlugin)({
        imports: [core_1.PluginCommonModule],
        providers: [GreetingService, LegacyExportService],
        shopApiExtensions: {
            schema: (0, graphql_tag_1.default)`extend type Query { greeting: String! }`,
            resolvers: [GreetingResolver],
        },
    })
], GreetingPlugin);
exports.GreetingPlugin = GreetingPlugin;
