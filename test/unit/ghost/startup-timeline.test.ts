import { STARTUP_STEPS, toSpringStartup } from '../../../src/ghost/reports/startup-timeline';

describe("the start-up timeline in Spring Boot's shape", () => {
  const t0 = Date.UTC(2026, 10, 23, 8, 0, 0);
  const timeline = {
    startTime: t0,
    endTime: t0 + 40,
    beans: [
      { name: 'UsersService', module: 'UsersModule', scope: 'singleton', startTime: t0 + 10, endTime: t0 + 14.5 },
      { name: 'ConfigService', module: 'ConfigModule', scope: 'singleton', startTime: t0 + 1, endTime: t0 + 2 },
      { name: 'UsersController', module: 'UsersModule', scope: 'singleton', startTime: t0 + 15, endTime: t0 + 30 },
    ],
    analysis: { startTime: t0 + 40, endTime: t0 + 41.25 },
  };

  it('has a root step, one step per module spanning its beans, one per bean under it, and the analysis', () => {
    const { timeline: out } = toSpringStartup(timeline);
    expect(out.startTime).toBe('2026-11-23T08:00:00.000Z');
    const steps = out.events.map((e) => [
      e.startupStep.name,
      e.startupStep.id,
      e.startupStep.parentId,
      Object.fromEntries(e.startupStep.tags.map((t) => [t.key, t.value])),
    ]);
    expect(steps).toEqual([
      [STARTUP_STEPS.container, 0, undefined, { phase: 'bootstrap' }],
      [STARTUP_STEPS.module, 1, 0, { module: 'ConfigModule', phase: 'instantiate' }],
      [
        STARTUP_STEPS.bean,
        2,
        1,
        { module: 'ConfigModule', bean: 'ConfigService', scope: 'singleton', phase: 'instantiate' },
      ],
      [STARTUP_STEPS.module, 3, 0, { module: 'UsersModule', phase: 'instantiate' }],
      [
        STARTUP_STEPS.bean,
        4,
        3,
        { module: 'UsersModule', bean: 'UsersService', scope: 'singleton', phase: 'instantiate' },
      ],
      [
        STARTUP_STEPS.bean,
        5,
        3,
        { module: 'UsersModule', bean: 'UsersController', scope: 'singleton', phase: 'instantiate' },
      ],
      [STARTUP_STEPS.analysis, 6, 0, { phase: 'analysis' }],
    ]);
    const users = out.events[3]!;
    expect([users.startTime, users.endTime, users.duration]).toEqual([
      '2026-11-23T08:00:00.010Z',
      '2026-11-23T08:00:00.030Z',
      'PT0.02S',
    ]);
    expect(out.events[4]!.duration).toBe('PT0.0045S');
    expect(out.events[0]!.duration).toBe('PT0.04125S');
  });
});
