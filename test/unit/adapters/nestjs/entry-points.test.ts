/**
 * Phase 1's entry points of command-line handlers: a command class nothing injects is called by its runner, never a
 * ghost candidate. The metadata is written as each library writes it (neither is installed here): nestjs-console's
 * `@Console()` on the class, nest-commander's `@Command()` / `@SubCommand()` under its `CommandBuilder:` keys.
 */
import 'reflect-metadata';
import { nestEntryPoints } from '../../../../src/adapters/nestjs/entry-points';
import { ClassOriginIndex } from '../../../../src/ghost/origins/class-origin';

const reasons = (cls: new () => object) =>
  nestEntryPoints({ role: 'provider', token: cls, metatype: cls, instance: new cls() }, new ClassOriginIndex());

describe('command-line handlers are entry points', () => {
  it("nestjs-console's @Console class", () => {
    class CreateUserCli {
      createUser(): void {}
    }
    Reflect.defineMetadata('nests-console.Console', { command: 'new' }, CreateUserCli);
    expect(reasons(CreateUserCli)).toEqual(['cli-command']);
  });

  it("nest-commander's @Command and @SubCommand classes", () => {
    class SeedCommand {
      run(): void {}
    }
    Reflect.defineMetadata('CommandBuilder:Command:Meta', { name: 'seed' }, SeedCommand);
    class UsersAdd {
      run(): void {}
    }
    Reflect.defineMetadata('CommandBuilder:Subcommand:Meta', { name: 'add' }, UsersAdd);
    expect(reasons(SeedCommand)).toEqual(['cli-command']);
    expect(reasons(UsersAdd)).toEqual(['cli-command']);
  });

  it('a plain service nothing calls has none', () => {
    class Plain {
      run(): void {}
    }
    expect(reasons(Plain)).toEqual([]);
  });
});
