import { humanSize } from '../../../src/actuator';

describe('humanSize', () => {
  it.each([
    [0, '0 B'],
    [512, '512 B'],
    [1023, '1023 B'],
    [1024, '1 KB'],
    [1536, '1.5 KB'],
    [1_048_576, '1 MB'],
    [1_572_864, '1.5 MB'],
    [1_100_000, '1.05 MB'],
    [2 * 1024 ** 3, '2 GB'],
    [-1, 'unknown size'],
    [Number.NaN, 'unknown size'],
  ])('%d bytes → %s', (bytes, text) => {
    expect(humanSize(bytes)).toBe(text);
  });
});
