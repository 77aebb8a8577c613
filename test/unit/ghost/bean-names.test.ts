import { BeanGraph, uniqueBeanNames } from '../../../src/ghost/analysis/bean-graph';

describe('uniqueBeanNames', () => {
  it('keeps a unique token, qualifies clashing ones by module, and numbers what still clashes, in input order', () => {
    const beans = [
      { token: 'Logger', module: 'AppModule' },
      { token: 'UsersService', module: 'UsersModule' },
      { token: 'Logger', module: 'UsersModule' },
      { token: 'AppModule/Logger' },
      { token: 'Logger', module: 'AppModule' },
      { token: 'Cache' },
      { token: 'Cache' },
    ];
    expect(uniqueBeanNames(beans)).toEqual([
      'AppModule/Logger#2',
      'UsersService',
      'UsersModule/Logger',
      'AppModule/Logger',
      'AppModule/Logger#3',
      'Cache',
      'Cache#2',
    ]);
  });

  it("qualifies a lazy container's clashing tokens by class, so that a name stays when a sibling comes or goes", () => {
    const endpoints = [
      { token: 'Endpoint', className: 'GetUsers' },
      { token: 'Endpoint', className: 'CreateUser' },
      // the token's value or factory: no class to say
      { token: 'Endpoint' },
      { token: 'Clock' },
    ];
    expect(uniqueBeanNames(endpoints)).toEqual(['Endpoint[GetUsers]', 'Endpoint[CreateUser]', 'Endpoint', 'Clock']);
    // a file added before the others keeps CreateUser's name
    expect(uniqueBeanNames([{ token: 'Endpoint', className: 'DeleteUser' }, ...endpoints])[2]).toBe(
      'Endpoint[CreateUser]',
    );
    // a class token registered with itself and with another class; a module still wins over the class
    expect(
      uniqueBeanNames([{ token: 'Foo' }, { token: 'Foo', className: 'Bar' }, { token: 'Foo', module: 'M' }]),
    ).toEqual(['Foo', 'Foo[Bar]', 'M/Foo']);
  });

  it('names a graph exactly as the graph names its beans', () => {
    const beans = [
      { token: 'A', module: 'M1' },
      { token: 'A', module: 'M2' },
      { token: 'B', module: 'M1' },
    ];
    const graph = new BeanGraph();
    for (const b of beans)
      graph.addBean({ ...b, kind: 'class', scope: 'singleton', role: 'provider', framework: false, eager: true });
    expect(graph.beans().map((b) => b.name)).toEqual(uniqueBeanNames(beans));
    expect(uniqueBeanNames(beans)).toEqual(['M1/A', 'M2/A', 'B']);
  });

  it('names the beans registered last around the names the others already have, never renaming one of them', () => {
    // NestJS's middleware come after the pre-read named (and Phase 2 tracked) the providers: a provider of the same
    // class keeps its name, the middleware takes the qualified one.
    const beans = [
      { token: 'LoggerMiddleware', module: 'AppModule' },
      { token: 'Users', module: 'AppModule' },
      { token: 'LoggerMiddleware', module: 'AppModule', namedLast: true },
      { token: 'Audit', module: 'AppModule', namedLast: true },
      { token: 'Audit', module: 'AdminModule', namedLast: true },
    ];
    expect(uniqueBeanNames(beans)).toEqual([
      'LoggerMiddleware',
      'Users',
      'AppModule/LoggerMiddleware',
      'AppModule/Audit',
      'AdminModule/Audit',
    ]);
    expect(uniqueBeanNames(beans.slice(0, 2))).toEqual(['LoggerMiddleware', 'Users']);
  });
});
