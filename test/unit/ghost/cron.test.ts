import { nextCronTime, parseCron } from '../../../src/ghost/analysis/cron';

/** Local time, as the jobs run without a time zone: `at(2026, 11, 27, 22, 5)` is 27 November 2026, 22:05:00. */
const at = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0) => new Date(y, mo - 1, d, h, mi, s);

describe('nextCronTime', () => {
  const from = at(2026, 11, 27, 22, 5, 30); // a Friday

  it.each([
    ['a yearly job, five fields', '0 0 1 1 *', at(2027, 1, 1)],
    ['@yearly', '@yearly', at(2027, 1, 1)],
    ['six fields, seconds first: Mondays 04:30', '0 30 4 * * 1', at(2026, 11, 30, 4, 30)],
    ['every minute', '* * * * *', at(2026, 11, 27, 22, 6)],
    ['every second', '* * * * * *', at(2026, 11, 27, 22, 5, 31)],
    ['a step', '*/15 * * * *', at(2026, 11, 27, 22, 15)],
    ['a range with a step', '0 9-17/4 * * *', at(2026, 11, 28, 9)],
    ['a list of names', '0 0 * * SAT,SUN', at(2026, 11, 28)],
    ['7 is Sunday', '0 0 * * 7', at(2026, 11, 29)],
    ['a month name', '0 0 1 MAR *', at(2027, 3, 1)],
    ['29 February', '0 0 29 2 *', at(2028, 2, 29)],
    ['day of month or day of week, both restricted', '0 0 13 * 5', at(2026, 12, 4)],
    ['later the same day', '0 45 23 * * *', at(2026, 11, 27, 23, 45)],
  ])('%s: %s', (_what, expression, expected) => {
    expect(nextCronTime(expression, from)?.toISOString()).toBe(expected.toISOString());
  });

  it('is strictly after the moment it starts from', () => {
    expect(nextCronTime('0 0 1 1 *', at(2027, 1, 1))?.toISOString()).toBe(at(2028, 1, 1).toISOString());
  });

  it('gives nothing for an expression that never fires or cannot be read', () => {
    expect(nextCronTime('0 0 30 2 *', from)).toBeUndefined();
    expect(nextCronTime('not a cron', from)).toBeUndefined();
    expect(nextCronTime('61 * * * *', from)).toBeUndefined();
  });

  it('says what is wrong with an expression', () => {
    expect(String(parseCron('* * *'))).toBe("Error: '* * *' has 3 fields, not 5 or 6");
    expect(String(parseCron('0 0 * * 9'))).toBe("Error: '0 0 * * 9': '9' is not in 0-7");
    expect(String(parseCron('*/0 * * * *'))).toBe("Error: '*/0 * * * *': bad step in '*/0'");
  });
});
