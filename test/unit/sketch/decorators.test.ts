import 'reflect-metadata';

import { Get, Post, UseFilters, Catch } from '@nestjs/common';
import type { Observable } from 'rxjs';

import {
  SkipSketch,
  SketchFraud,
  SketchGuard,
  SketchKeyError,
  SketchModule,
  SketchLimit,
  SketchShield,
  SketchThresholdError,
  SketchThresholdFilter,
  defineSketchDecorator,
} from '../../../src/sketch/nestjs';
import { SketchConfigError } from '../../../src/sketch/counters';
import { SketchRegistry } from '../../../src/sketch/registry';
import { captureLogs, withCapturedLogs } from '../../support/logs';
import { testLibrary } from './helpers';

const library = testLibrary();

/** A registry of its own per test, on a clock the test moves. */
function setup(): { registry: SketchRegistry; clock: { now: number }; advance(ms: number, id: string): void } {
  const clock = { now: 0 };
  const registry = new SketchRegistry({ library, clock: () => clock.now, autoRotate: false });
  return {
    registry,
    clock,
    // moves time in small steps, rotating as the timer would
    advance(ms, id) {
      const sketch = registry.find(id)!;
      const step = sketch.subWindowMs / 4;
      const end = clock.now + ms;
      while (clock.now < end) {
        clock.now = Math.min(end, clock.now + step);
        sketch.maybeRotate();
      }
    },
  };
}

const registries: SketchRegistry[] = [];
afterEach(() => {
  for (const r of registries.splice(0)) r.closeAll();
});
function track<T extends { registry: SketchRegistry }>(t: T): T {
  registries.push(t.registry);
  return t;
}

function catchSync(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

describe('@SketchLimit on plain classes', () => {
  it('runs the first N calls of a key, rejects the N+1th with a typed error, and leaves other keys alone', () => {
    const { registry } = track(setup());
    let ran = 0;
    class Api {
      @SketchLimit({ windowMs: 1000, requests: 3, key: (user: string) => user, registry })
      call(user: string): string {
        ran++;
        return `ok ${user}`;
      }
    }
    const api = new Api();
    for (let i = 0; i < 3; i++) expect(api.call('alice')).toBe('ok alice');
    const err = catchSync(() => api.call('alice')) as SketchThresholdError;
    expect(err).toBeInstanceOf(SketchThresholdError);
    expect(err.code).toBe('ERR_SKETCH_THRESHOLD');
    expect(err.sketchId).toBe('LIMIT_1000');
    expect(err.threshold).toBe(3);
    expect(err.estimate).toBe(4);
    expect(err.method).toBe('Api.call');
    expect(err.keyHash).toMatch(/^[0-9a-f]{16}$/);
    // the key itself appears nowhere
    expect(JSON.stringify({ ...err, message: err.message, body: err.getResponse() })).not.toContain('alice');
    expect(err.getStatus()).toBe(429);
    expect(err.statusCode).toBe(429);
    expect(err.retryAfterSeconds).toBe(Math.ceil((1000 + 1000 / 3) / 1000));
    expect(err.getResponse()).toEqual({
      statusCode: 429,
      error: 'Too Many Requests',
      message: expect.stringContaining('retry after'),
      code: 'ERR_SKETCH_THRESHOLD',
      sketchId: 'LIMIT_1000',
      retryAfterSeconds: 2,
    });
    expect(ran).toBe(3);
    expect(api.call('bob')).toBe('ok bob');
    expect(registry.stats('LIMIT_1000')).toEqual({ hits: 5, breaches: 1, keyErrors: 0 });
  });

  it('admits the key again once the window has passed (injected clock), and never more than N per window', () => {
    const t = track(setup());
    class Api {
      @SketchLimit({ windowMs: 3000, requests: 2, key: (k: string) => k, registry: t.registry })
      call(_k: string): boolean {
        return true;
      }
    }
    const api = new Api();
    expect(api.call('k')).toBe(true);
    t.advance(1000, 'LIMIT_3000');
    expect(api.call('k')).toBe(true);
    t.advance(1000, 'LIMIT_3000');
    const err = catchSync(() => api.call('k')) as SketchThresholdError;
    expect(err.retryAfterSeconds).toBe(4); // ceil((3000 + 1000) / 1000)
    // still inside the window of the second admitted call: rejected
    t.advance(900, 'LIMIT_3000');
    expect(() => api.call('k')).toThrow(SketchThresholdError);
    // a key that stops calling for retryAfterSeconds is admitted again
    t.advance(err.retryAfterSeconds * 1000, 'LIMIT_3000');
    expect(api.call('k')).toBe(true);
  });

  it('rejects the promise of an async method instead of throwing synchronously', async () => {
    const { registry } = track(setup());
    class Api {
      @SketchLimit({ requests: 1, registry })
      async call(): Promise<number> {
        return 1;
      }
    }
    const api = new Api();
    await expect(api.call()).resolves.toBe(1);
    let p: Promise<number> | undefined;
    expect(() => (p = api.call())).not.toThrow();
    await expect(p).rejects.toBeInstanceOf(SketchThresholdError);
  });

  it('without a key, counts the method itself: one limit per method, separate from other methods', () => {
    const { registry } = track(setup());
    class A {
      @SketchLimit({ requests: 2, registry })
      one(): number {
        return 1;
      }
      @SketchLimit({ requests: 2, registry })
      two(): number {
        return 2;
      }
    }
    const a = new A();
    const b = new A();
    a.one();
    b.one(); // same method on another instance: same limit
    expect(() => a.one()).toThrow(SketchThresholdError);
    expect(a.two()).toBe(2);
    expect(registry.list().map((i) => i.id)).toEqual(['LIMIT_60000']);
  });

  it('shares one sketch among every method with the same type and window; other types and windows get their own', () => {
    const { registry } = track(setup());
    const byUser = (u: string): string => u;
    class Orders {
      @SketchLimit({ windowMs: 1000, requests: 3, key: byUser, registry })
      list(_u: string): string {
        return 'list';
      }
    }
    class Payments {
      @SketchLimit({ windowMs: 1000, requests: 3, key: byUser, registry })
      pay(_u: string): string {
        return 'pay';
      }
      @SketchShield({ windowMs: 1000, threshold: 3, key: byUser, registry })
      refund(_u: string): string {
        return 'refund';
      }
      @SketchFraud({ windowMs: 2000, maxEvents: 3, key: byUser, registry })
      transfer(_u: string): string {
        return 'transfer';
      }
    }
    const o = new Orders();
    const p = new Payments();
    o.list('u');
    o.list('u');
    p.pay('u');
    // the key's events of both methods add up in LIMIT_1000
    expect(() => p.pay('u')).toThrow(SketchThresholdError);
    expect(() => o.list('u')).toThrow(SketchThresholdError);
    expect(p.refund('u')).toBe('refund');
    expect(p.transfer('u')).toBe('transfer');
    expect(registry.list().map((i) => i.id)).toEqual(['FRAUD_2000', 'LIMIT_1000', 'SHIELD_1000']);
    expect(registry.stats('LIMIT_1000')).toEqual({ hits: 5, breaches: 2, keyErrors: 0 });
  });

  it('defines custom types with their own id prefix', () => {
    const { registry } = track(setup());
    const SketchBurst = defineSketchDecorator('BURST');
    class Api {
      @SketchBurst({ windowMs: 500, threshold: 1, registry })
      call(): string {
        return 'ok';
      }
    }
    new Api().call();
    expect(() => new Api().call()).toThrow(expect.objectContaining({ sketchId: 'BURST_500' }));
    expect(() => defineSketchDecorator('no-dash')).toThrow(SketchConfigError);
  });

  it('accepts numbers and bytes as keys; bytes are told apart byte by byte', () => {
    const { registry } = track(setup());
    class Api {
      @SketchLimit({ requests: 1, key: (k: unknown) => k as never, registry })
      call(_k: unknown): boolean {
        return true;
      }
    }
    const api = new Api();
    expect(api.call(42)).toBe(true);
    expect(() => api.call(42)).toThrow(SketchThresholdError);
    expect(api.call(Uint8Array.of(0xc3, 0xa9))).toBe(true);
    expect(api.call(Uint8Array.of(0xc3, 0xa8))).toBe(true);
    expect(() => api.call(Buffer.from([0xc3, 0xa9]))).toThrow(SketchThresholdError);
    expect(api.call(10n ** 20n)).toBe(true);
  });

  it('counts a huge key whole (1 MB, told apart by its last character) and never puts it in the error', () => {
    const { registry } = track(setup());
    class Api {
      @SketchLimit({ requests: 1, key: (k: string) => k, registry })
      call(_k: string): boolean {
        return true;
      }
    }
    const api = new Api();
    const huge = 'k'.repeat(1024 * 1024 - 1);
    expect(api.call(`${huge}a`)).toBe(true);
    expect(api.call(`${huge}b`)).toBe(true);
    let err: unknown;
    try {
      api.call(`${huge}a`);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SketchThresholdError);
    expect(JSON.stringify((err as SketchThresholdError).getResponse())).not.toContain('kkkk');
    expect((err as Error).message).not.toContain('kkkk');
    expect((err as SketchThresholdError).keyHash).toMatch(/^[0-9a-f]+$/);
  });

  it('keeps working when its sketch was closed: a new one is created under the same id', () => {
    const { registry } = track(setup());
    class Api {
      @SketchLimit({ requests: 1, registry })
      call(): boolean {
        return true;
      }
    }
    const api = new Api();
    api.call();
    registry.closeAll();
    expect(api.call()).toBe(true);
    expect(registry.stats('LIMIT_60000')).toEqual({ hits: 1, breaches: 0, keyErrors: 0 });
  });

  it('refuses bad options at decoration time', () => {
    expect(() => SketchLimit({ requests: 0 })).toThrow(SketchConfigError);
    expect(() => SketchLimit({ requests: 1.5 })).toThrow(SketchConfigError);
    expect(() => SketchLimit({ requests: -3 })).toThrow(SketchConfigError);
    expect(() => SketchLimit({ requests: Number.NaN })).toThrow(/requests must be an integer/);
    expect(() => SketchLimit({ requests: 5, windowMs: 0 })).toThrow(SketchConfigError);
    expect(() => SketchLimit({ requests: 5, windowMs: 0.5 })).toThrow(SketchConfigError);
    expect(() => SketchLimit({} as never)).toThrow(/requests must be an integer/);
    expect(() => SketchShield({ threshold: 5, windowMs: -1 })).toThrow(SketchConfigError);
    expect(() => SketchFraud({ maxEvents: 5, mode: 'dry' as never })).toThrow(/mode/);
    expect(() => SketchLimit({ requests: 5, onKeyError: 'bucket' as never })).toThrow(/onKeyError/);
    expect(() => SketchLimit({ requests: 5, key: 'ip' as never })).toThrow(/key must be a function/);
    expect(() => SketchLimit({ requests: 5, skipIf: true as never })).toThrow(/skipIf must be a function/);
    expect(() => SketchLimit({ requests: 5, headers: 'x-ratelimit' as never })).toThrow(/headers must be/);
    expect(() => SketchLimit({ requests: 5, message: '' })).toThrow(/message must be a non-empty string or a function/);
    expect(() => SketchLimit({ requests: 5, message: 42 as never })).toThrow(/message must be/);
    const dec = SketchLimit({ requests: 5 });
    expect(() => (dec as any)({}, 'field', undefined)).toThrow(/apply to methods/);
  });
});

describe('on a class, SkipSketch and skipIf', () => {
  it('on a controller applies to every route, not to other methods; @SkipSketch() exempts a route', () => {
    const { registry } = track(setup());
    const key = (user: string) => user;
    @SketchLimit({ windowMs: 1000, requests: 1, key, registry })
    class Api {
      @Get('a')
      a(user: string): string {
        return `a ${user}`;
      }
      @Get('b')
      b(user: string): string {
        return `b ${user}`;
      }
      @Get('health')
      @SkipSketch()
      health(user: string): string {
        return `health ${user}`;
      }
      helper(user: string): string {
        return `helper ${user}`;
      }
    }
    const api = new Api();
    expect(api.a('ada')).toBe('a ada');
    // one sketch, one key: the class's routes share the budget, as method decorators of one type and window do
    expect(catchSync(() => api.b('ada'))).toBeInstanceOf(SketchThresholdError);
    for (let i = 0; i < 3; i++) expect(api.health('ada')).toBe('health ada');
    for (let i = 0; i < 3; i++) expect(api.helper('ada')).toBe('helper ada');
    expect(registry.stats('LIMIT_1000')).toEqual({ hits: 2, breaches: 1, keyErrors: 0 });
    // the routes stay routes
    expect(Reflect.getMetadata('path', Api.prototype.a)).toBe('a');
  });

  it('a method-level decorator of the same sketch overrides the class one; other sketches stack', () => {
    const { registry } = track(setup());
    const key = (user: string) => user;
    @SketchLimit({ windowMs: 1000, requests: 1, key, registry })
    class Api {
      @SketchLimit({ windowMs: 1000, requests: 3, key, registry })
      generous(user: string): string {
        return user;
      }
      @SketchShield({ windowMs: 1000, threshold: 5, key, registry })
      both(user: string): string {
        return user;
      }
    }
    const api = new Api();
    for (let i = 0; i < 3; i++) expect(api.generous('ada')).toBe('ada');
    expect(catchSync(() => api.generous('ada'))).toBeInstanceOf(SketchThresholdError);
    // `both` counts in SHIELD_1000 and in the class's LIMIT_1000, where 'ada' is already over
    expect(api.both('bob')).toBe('bob');
    expect(catchSync(() => api.both('ada'))).toBeInstanceOf(SketchThresholdError);
    expect(registry.stats('SHIELD_1000')?.hits).toBe(1);
  });

  it('skipIf runs a call uncounted; a skipIf that throws counts the call and is logged', () => {
    const { registry } = track(setup());
    class Api {
      @SketchLimit({
        windowMs: 1000,
        requests: 1,
        key: (u: string) => u,
        skipIf: (u: string) => u === 'internal',
        registry,
      })
      call(user: string): string {
        return user;
      }
      @SketchShield({
        windowMs: 1000,
        threshold: 1,
        key: (u: string) => u,
        skipIf: () => {
          throw new Error('boom');
        },
        registry,
      })
      risky(user: string): string {
        return user;
      }
    }
    const api = new Api();
    for (let i = 0; i < 5; i++) expect(api.call('internal')).toBe('internal');
    expect(registry.stats('LIMIT_1000')?.hits ?? 0).toBe(0);
    expect(api.call('ada')).toBe('ada');
    expect(catchSync(() => api.call('ada'))).toBeInstanceOf(SketchThresholdError);
    expect(registry.stats('LIMIT_1000')).toEqual({ hits: 2, breaches: 1, keyErrors: 0 });
    const { warnings } = withCapturedLogs(() => expect(api.risky('x')).toBe('x'));
    expect(registry.stats('SHIELD_1000')?.hits).toBe(1);
    expect(warnings.join('\n')).toMatch(/skipIf of Api.risky threw \(boom\); the call was counted/);
  });
});

describe('message', () => {
  it('puts a fixed or computed message in the error (and so the 429 body); a failing function leaves the default, logged', () => {
    const { registry } = track(setup());
    class Api {
      @SketchLimit({ requests: 1, key: (k: string) => k, registry, message: 'Easy there' })
      fixed(_k: string): void {}
      @SketchShield({
        threshold: 1,
        key: (k: string) => k,
        registry,
        message: (d) => `Wait ${d.retryAfterSeconds} s (${d.sketchId})`,
      })
      computed(_k: string): void {}
      @SketchFraud({
        maxEvents: 1,
        key: (k: string) => k,
        registry,
        message: () => {
          throw new Error('no text');
        },
      })
      failing(_k: string): void {}
    }
    const api = new Api();
    api.fixed('a');
    const fixed = catchSync(() => api.fixed('a')) as SketchThresholdError;
    expect(fixed.message).toBe('Easy there');
    expect(fixed.getResponse().message).toBe('Easy there');
    api.computed('a');
    expect((catchSync(() => api.computed('a')) as SketchThresholdError).message).toBe('Wait 80 s (SHIELD_60000)');
    api.failing('a');
    const { result, warnings } = withCapturedLogs(() => catchSync(() => api.failing('a')) as SketchThresholdError);
    expect(result.message).toBe('Rate limit exceeded (sketch FRAUD_60000); retry after 80 s');
    expect(warnings.join('\n')).toMatch(
      /message function of Api.failing threw \(no text\); the default message was used/,
    );
  });
});

describe('SketchModule and SketchGuard options', () => {
  it('refuses bad options when the module is defined, naming the limit', () => {
    expect(() => SketchModule.forRoot(undefined as never)).toThrow(/options object required/);
    expect(() => SketchModule.forRoot({ limits: [] })).toThrow(/at least one limit/);
    expect(() => SketchModule.forRoot({ limits: { requests: 0 } })).toThrow(/LIMIT_60000: requests must be an integer/);
    expect(() =>
      SketchModule.forRoot({
        limits: [
          { requests: 5, windowMs: 1000 },
          { requests: 9, windowMs: 1000 },
        ],
      }),
    ).toThrow(/two limits of sketch LIMIT_1000/);
    expect(() => SketchModule.forRoot({ limits: { requests: 5, type: 'bad type' } })).toThrow(SketchConfigError);
    expect(() => SketchModule.forRoot({ limits: { requests: 5 }, key: 'ip' as never })).toThrow(
      /key must be a function/,
    );
    expect(() => SketchModule.forRootAsync({} as never)).toThrow(/useFactory required/);
  });

  it("registers the guard and the filter under Nest's APP_GUARD and APP_FILTER; the async form builds the guard from its factory", async () => {
    const mod = SketchModule.forRoot({ limits: { requests: 5 } });
    expect(mod.module).toBe(SketchModule);
    const providers = mod.providers as { provide: string; useValue?: unknown }[];
    expect(providers.map((p) => p.provide)).toEqual(['APP_GUARD', 'APP_FILTER']);
    expect(providers[0]!.useValue).toBeInstanceOf(SketchGuard);
    expect(providers[1]!.useValue).toBeInstanceOf(SketchThresholdFilter);

    const asyncMod = SketchModule.forRootAsync({
      inject: ['CONFIG'],
      useFactory: (config: { perMinute: number }) => ({ limits: { requests: config.perMinute } }),
    });
    const guardProvider = asyncMod.providers[0] as {
      provide: string;
      inject: unknown[];
      useFactory(...deps: unknown[]): Promise<unknown>;
    };
    expect(guardProvider.provide).toBe('APP_GUARD');
    expect(guardProvider.inject).toEqual(['CONFIG']);
    await expect(guardProvider.useFactory({ perMinute: 10 })).resolves.toBeInstanceOf(SketchGuard);
    await expect(guardProvider.useFactory({ perMinute: -1 })).rejects.toThrow(/requests must be an integer/);
  });
});

describe("mode: 'observe'", () => {
  it('runs every call, counts the breaches and warns at most once per sketch per minute', () => {
    const { registry } = track(setup());
    const logs = captureLogs();
    try {
      let ran = 0;
      class Api {
        @SketchLimit({ requests: 2, mode: 'observe', key: (k: string) => k, registry })
        call(_k: string): void {
          ran++;
        }
      }
      const api = new Api();
      for (let i = 0; i < 10; i++) api.call('secret-key');
      expect(ran).toBe(10);
      expect(registry.stats('LIMIT_60000')).toEqual({ hits: 10, breaches: 8, keyErrors: 0 });
      expect(logs.warnings).toHaveLength(1);
      expect(logs.warnings[0]).toMatch(
        /^sketch LIMIT_60000 \(observe mode\): Api\.call key [0-9a-f]{16} at 3 > threshold 2; the call ran$/,
      );
      expect(logs.warnings.join('\n')).not.toContain('secret-key');
    } finally {
      logs.restore();
    }
  });
});

describe('key functions that throw or return nothing', () => {
  it('admits the call uncounted, counts a key error, and warns once per sketch per minute, naming the cause', () => {
    const { registry } = track(setup());
    const logs = captureLogs();
    try {
      let ran = 0;
      class Api {
        @SketchShield({ threshold: 1, key: (h: Record<string, string>) => h['x-user'], registry })
        call(_h: Record<string, string>): void {
          ran++;
        }
        @SketchShield({
          threshold: 1,
          key: () => {
            throw new Error('no session');
          },
          registry,
        })
        other(): void {
          ran++;
        }
      }
      const api = new Api();
      for (let i = 0; i < 5; i++) api.call({});
      api.call({ 'x-user': '' });
      api.other();
      expect(ran).toBe(7);
      // nothing went into a shared bucket: a real key still has its full budget
      api.call({ 'x-user': 'u1' });
      expect(() => api.call({ 'x-user': 'u1' })).toThrow(SketchThresholdError);
      expect(registry.stats('SHIELD_60000')).toEqual({ hits: 2, breaches: 1, keyErrors: 7 });
      expect(logs.warnings).toEqual([
        'sketch SHIELD_60000: the key function of Api.call returned undefined, not a non-empty string, number or bytes; ' +
          'the call was run without being counted (onKeyError: admit)',
      ]);
    } finally {
      logs.restore();
    }
  });

  it("with onKeyError: 'reject', throws SketchKeyError (rejects, for async methods) and does not run the method", async () => {
    const { registry } = track(setup());
    const logs = captureLogs();
    try {
      class Api {
        @SketchFraud({ maxEvents: 5, onKeyError: 'reject', key: () => null, registry })
        call(): string {
          return 'ran';
        }
        @SketchFraud({
          maxEvents: 5,
          onKeyError: 'reject',
          key: () => {
            throw new TypeError('boom');
          },
          registry,
        })
        async later(): Promise<string> {
          return 'ran';
        }
      }
      const err = catchSync(() => new Api().call()) as SketchKeyError;
      expect(err).toBeInstanceOf(SketchKeyError);
      expect(err.code).toBe('ERR_SKETCH_KEY');
      expect(err.message).toBe(
        'Api.call: the key function of sketch FRAUD_60000 returned null, not a non-empty string, number or bytes',
      );
      const p = new Api().later();
      await expect(p).rejects.toThrow(/Api\.later: the key function of sketch FRAUD_60000 threw: boom/);
      expect(registry.stats('FRAUD_60000')).toEqual({ hits: 0, breaches: 0, keyErrors: 2 });
    } finally {
      logs.restore();
    }
  });
});

describe('what the decorated method keeps', () => {
  it('keeps name, length and every reflect-metadata entry, with @Get() above or below', () => {
    const { registry } = track(setup());
    @Catch()
    class AllFilter {
      catch(): void {}
    }
    class Ctrl {
      @Get('above')
      @SketchLimit({ requests: 5, registry })
      above(_a: string, _b: number): string {
        return 'a';
      }

      @SketchLimit({ requests: 5, registry })
      @Post('below')
      @UseFilters(new AllFilter())
      below(_a: string): string {
        return 'b';
      }
    }
    const proto = Ctrl.prototype as any;
    expect(proto.above.name).toBe('above');
    expect(proto.above.length).toBe(2);
    expect(proto.below.name).toBe('below');
    expect(proto.below.length).toBe(1);
    expect(Reflect.getMetadata('path', proto.above)).toBe('above');
    expect(Reflect.getMetadata('method', proto.above)).toBe(0); // RequestMethod.GET
    expect(Reflect.getMetadata('path', proto.below)).toBe('below');
    expect(Reflect.getMetadata('method', proto.below)).toBe(1); // RequestMethod.POST
    const filters = Reflect.getMetadata('__exceptionFilters__', proto.below) as unknown[];
    expect(filters).toHaveLength(2);
    expect(filters[0]).toBeInstanceOf(AllFilter);
    expect(filters[1]).toBeInstanceOf(SketchThresholdFilter);
    expect(Reflect.getMetadata('__filterCatchExceptions__', SketchThresholdFilter.prototype)).toEqual([
      SketchThresholdError,
    ]);
    // the TypeScript design metadata lives on the prototype and is untouched
    expect(Reflect.getMetadata('design:paramtypes', proto, 'above')).toEqual([String, Number]);
  });
});

describe('HTTP answers outside Nest', () => {
  function fakeNodeResponse(): any {
    const headers: Record<string, unknown> = {};
    return {
      statusCode: 200,
      headersSent: false,
      body: undefined as string | undefined,
      headers,
      setHeader(n: string, v: unknown) {
        headers[n.toLowerCase()] = v;
      },
      end(b?: string) {
        this.body = b;
        this.headersSent = true;
      },
    };
  }
  function fakeFastifyReply(): any {
    const headers: Record<string, unknown> = {};
    const reply: any = {
      raw: {},
      sent: false,
      status: 200,
      headers,
      code(s: number) {
        reply.status = s;
        return reply;
      },
      header(n: string, v: unknown) {
        headers[n] = v;
        return reply;
      },
      send(b: string) {
        reply.body = b;
        reply.sent = true;
        return reply;
      },
    };
    return reply;
  }

  it('answers 429 with JSON and Retry-After on a Node/Express response found among the arguments', () => {
    const { registry } = track(setup());
    let ran = 0;
    class Handlers {
      @SketchLimit({ requests: 1, key: (req: { ip: string }) => req.ip, registry })
      get(_req: { ip: string }, res: any): void {
        ran++;
        res.end('ok');
      }
    }
    const h = new Handlers();
    h.get({ ip: '1.2.3.4' }, fakeNodeResponse());
    const res = fakeNodeResponse();
    expect(h.get({ ip: '1.2.3.4' }, res)).toBe(res);
    expect(ran).toBe(1);
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('80');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(res.body)).toMatchObject({
      statusCode: 429,
      code: 'ERR_SKETCH_THRESHOLD',
      sketchId: 'LIMIT_60000',
      retryAfterSeconds: 80,
    });
  });

  it('answers on a Fastify reply, and resolves (not rejects) an async handler that was answered', async () => {
    const { registry } = track(setup());
    class Handlers {
      @SketchLimit({ requests: 1, registry })
      async get(_req: unknown, reply: any): Promise<unknown> {
        return reply.send('ok');
      }
    }
    const h = new Handlers();
    await h.get({}, fakeFastifyReply());
    const reply = fakeFastifyReply();
    await expect(h.get({}, reply)).resolves.toBe(reply);
    expect(reply.status).toBe(429);
    expect(reply.headers['retry-after']).toBe('80');
    expect(JSON.parse(reply.body)).toMatchObject({ statusCode: 429, retryAfterSeconds: 80 });
  });

  it('answers a real Express app end to end', async () => {
    const express = require('express');
    const { registry } = track(setup());
    class Handlers {
      @SketchLimit({ requests: 2, key: (req: any) => req.get('x-key'), registry })
      hello(_req: unknown, res: any): void {
        res.json({ hello: 'world' });
      }
    }
    const h = new Handlers();
    const app = express();
    app.get('/hello', (req: unknown, res: unknown) => h.hello(req, res));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const url = `http://127.0.0.1:${server.address().port}/hello`;
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await fetch(url, { headers: { 'x-key': 'a' } })).status);
      expect(statuses).toEqual([200, 200, 429]);
      const res = await fetch(url, { headers: { 'x-key': 'a' } });
      expect(res.headers.get('retry-after')).toBe('80');
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toMatchObject({ statusCode: 429, error: 'Too Many Requests', sketchId: 'LIMIT_60000' });
      expect((await fetch(url, { headers: { 'x-key': 'b' } })).status).toBe(200);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('answers a real Fastify app end to end, sync and async handlers', async () => {
    const Fastify = require('fastify');
    const { registry } = track(setup());
    class Handlers {
      @SketchLimit({ requests: 2, key: (req: any) => req.headers['x-key'], registry })
      hello(_req: unknown, reply: any): unknown {
        return reply.send({ hello: 'world' });
      }
      @SketchShield({ threshold: 1, key: (req: any) => req.headers['x-key'], registry })
      async later(_req: unknown, _reply: unknown): Promise<unknown> {
        return { later: true };
      }
    }
    const h = new Handlers();
    const app = Fastify();
    app.get('/hello', (req: unknown, reply: unknown) => h.hello(req, reply));
    app.get('/later', (req: unknown, reply: unknown) => h.later(req, reply));
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const base = `http://127.0.0.1:${app.server.address().port}`;
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await fetch(`${base}/hello`, { headers: { 'x-key': 'a' } })).status);
      expect(statuses).toEqual([200, 200, 429]);
      const res = await fetch(`${base}/hello`, { headers: { 'x-key': 'a' } });
      expect(res.headers.get('retry-after')).toBe('80');
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toMatchObject({ statusCode: 429, error: 'Too Many Requests', sketchId: 'LIMIT_60000' });
      expect((await fetch(`${base}/hello`, { headers: { 'x-key': 'b' } })).status).toBe(200);
      expect((await fetch(`${base}/later`, { headers: { 'x-key': 'a' } })).status).toBe(200);
      const rejected = await fetch(`${base}/later`, { headers: { 'x-key': 'a' } });
      expect(rejected.status).toBe(429);
      expect(await rejected.json()).toMatchObject({ sketchId: 'SHIELD_60000' });
    } finally {
      await app.close();
    }
  });

  it("the Nest filter answers on Express and Fastify responses, and in each other transport's own way", () => {
    const filter = new SketchThresholdFilter();
    const err = new SketchThresholdError({
      sketchId: 'LIMIT_1000',
      keyHash: 'h',
      threshold: 1,
      estimate: 2,
      retryAfterSeconds: 2,
      method: 'A.b',
    });
    const res = fakeNodeResponse();
    expect(
      filter.catch(err, { getType: () => 'http', getArgByIndex: (i) => (i === 1 ? res : undefined) }),
    ).toBeUndefined();
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('2');
    const reply = fakeFastifyReply();
    filter.catch(err, { getType: () => 'http', getArgByIndex: (i) => (i === 1 ? reply : undefined) });
    expect(reply.status).toBe(429);
    // GraphQL: the error is the field's result; a WebSocket host without a socket is left to Nest
    expect(filter.catch(err, { getType: () => 'graphql', getArgByIndex: () => undefined })).toBe(err);
    expect(filter.catch(err, { getType: () => 'ws', getArgByIndex: () => undefined })).toBeUndefined();
    // a microservice: an Observable that fails with what the caller receives
    const failed = filter.catch(err, { getType: () => 'rpc', getArgByIndex: () => undefined }) as Observable<never>;
    let received: unknown;
    failed.subscribe({ error: (e: unknown) => (received = e) });
    expect(received).toEqual({
      status: 'error',
      message: err.message,
      code: 'ERR_SKETCH_THRESHOLD',
      retryAfterSeconds: 2,
      sketchId: 'LIMIT_1000',
    });
    // unanswerable: hand the exception back so that Nest's own filter answers
    expect(filter.catch(err, { getType: () => 'http', getArgByIndex: () => ({}) })).toBe(err);
  });

  it('without a response among the arguments, the error propagates', () => {
    const { registry } = track(setup());
    class Worker {
      @SketchLimit({ requests: 1, registry })
      run(_job: { id: number }): void {}
    }
    const w = new Worker();
    w.run({ id: 1 });
    expect(() => w.run({ id: 2 })).toThrow(SketchThresholdError);
  });
});
