/**
 * The native loader against a noexec temp directory: a tmpfs mounted by the `mount` program (root with
 * CAP_SYS_ADMIN), which is why this lives among the end-to-end tests. The loader's other failures are in
 * test/unit/sketch/loader.test.ts.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { setLogger } from '../../../src/shared/logger';
import { UnsatisfiedLinkError } from '../../../src/sketch/native/errors';
import { loadNativeLibrary, type LoaderOptions } from '../../../src/sketch/native/loader';
import { recordingLogger } from '../../support/logs';
import { tempDir } from '../../support/temp';

const scratch = tempDir('loader-noexec');

/** Loads with a capturing logger; returns the lines and the error. */
function load(options: LoaderOptions): { lines: string[]; error?: UnsatisfiedLinkError } {
  const cap = recordingLogger();
  const previous = setLogger(cap.logger);
  try {
    loadNativeLibrary(options);
    return { lines: cap.lines };
  } catch (err) {
    if (!(err instanceof UnsatisfiedLinkError)) throw err;
    return { lines: cap.lines, error: err };
  } finally {
    setLogger(previous);
  }
}

// A noexec tmpfs needs mount(2): root with CAP_SYS_ADMIN. Elsewhere the test is skipped, saying why. Whether it can
// is tried when the file is read (mounted and unmounted at once); the mount the test uses is made in beforeAll, so
// that a run filtering this test out (`jest -t …`, which skips both hooks) leaves no mount behind in the temp dir.
const noexecDir = path.join(scratch, 'noexec');
const mountNoexec = () =>
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'noexec,size=4m,mode=0700', 'tmpfs', noexecDir], { stdio: 'pipe' });
// lazy: jest's own watchers can keep the mount point busy for a moment
const unmount = () => execFileSync('umount', ['-l', noexecDir]);
let canMount = false;
let mounted = false;
let mountSkip = '';
if (process.platform === 'linux') {
  fs.mkdirSync(noexecDir);
  try {
    mountNoexec();
    unmount();
    canMount = true;
  } catch (err) {
    mountSkip = `cannot mount a noexec tmpfs here (${(err as Error).message.split('\n')[0]}); run as root with CAP_SYS_ADMIN`;
  }
} else {
  mountSkip = 'noexec mounts are a Linux test';
}

describe('loading from a noexec temp directory', () => {
  beforeAll(() => {
    if (!canMount) return;
    mountNoexec();
    mounted = true;
  });
  afterAll(() => {
    if (mounted) unmount();
  });
  if (!canMount) {
    it.skip(`names the noexec mount — SKIPPED: ${mountSkip}`, () => undefined);
    return;
  }
  it('fails with NOEXEC_TEMP naming the missing execute permission ("failed to map segment")', () => {
    const { error, lines } = load({ tempDir: noexecDir });
    expect(error?.reason).toBe('NOEXEC_TEMP');
    expect(error?.code).toBe('ERR_SKETCH_NATIVE_NOEXEC_TEMP');
    expect(error?.message).toContain('lacks execute permission');
    expect(error?.message).toMatch(/failed to map segment/);
    expect(error?.pathsTried[1]).toMatch(new RegExp(`^${noexecDir}/diag-sketch-`));
    // the failed extraction leaves nothing behind
    expect(fs.readdirSync(noexecDir)).toEqual([]);
    expect(lines).toHaveLength(1);
  });
});
