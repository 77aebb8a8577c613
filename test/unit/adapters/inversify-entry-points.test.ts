import 'reflect-metadata';
import * as path from 'node:path';

import { inversifyEntryPoints } from '../../../src/adapters/lazy/inversify/entry-points';

/**
 * Entry points of InversifyJS web layers, read from the metadata the real decorators write:
 * inversify-express-utils 6 (installed beside InversifyJS 6 in test/fixtures/inversify6 by the test setup).
 */
const utils = require(path.resolve(__dirname, '../../fixtures/inversify6/node_modules/inversify-express-utils')) as {
  controller(path: string): ClassDecorator;
};

describe('inversifyEntryPoints', () => {
  it('names a class @controller() marked, and nothing else', () => {
    class OrdersController {}
    utils.controller('/orders')(OrdersController);
    class PlainService {}
    expect(inversifyEntryPoints(OrdersController)).toEqual(['inversify-express-utils controller']);
    expect(inversifyEntryPoints(PlainService)).toEqual([]);
    expect(inversifyEntryPoints(undefined)).toEqual([]);
    expect(inversifyEntryPoints('OrdersController')).toEqual([]);
  });
});
