/**
 * A stack captured at a container's `bind` and read at ready (InversifyJS's "who bound this"): the read must give
 * the frames of the capture whatever the application did with `Error` in between, and never throw, since it runs
 * inside the adapter's analysis at ready.
 */
import { callSites, captureStack, readCapturedStack } from '../../../../src/ghost/origins/call-sites';

function binder(): ReturnType<typeof captureStack> {
  return captureStack(captureStack, 12);
}

/** Runs `body` with one of Error's static properties made read-only, then puts it back as it was. */
function withReadOnly(name: 'prepareStackTrace' | 'stackTraceLimit', body: () => void): void {
  const before = Object.getOwnPropertyDescriptor(Error, name);
  Object.defineProperty(Error, name, { value: (Error as any)[name], writable: false, configurable: true });
  try {
    body();
  } finally {
    if (before === undefined) delete (Error as any)[name];
    else Object.defineProperty(Error, name, before);
  }
}

describe('captureStack / readCapturedStack', () => {
  it("reads the capture's frames although the application set its own prepareStackTrace and limit since", () => {
    const captured = binder();
    const prepare = Error.prepareStackTrace;
    const limit = Error.stackTraceLimit;
    Error.prepareStackTrace = () => 'the application formats its own stacks';
    Error.stackTraceLimit = 1;
    try {
      const sites = readCapturedStack(captured);
      expect(sites.length).toBeGreaterThan(1);
      expect(sites[0]!.getFunctionName()).toBe('binder');
      expect(Error.stackTraceLimit).toBe(1);
      expect((Error.prepareStackTrace as any)()).toBe('the application formats its own stacks');
    } finally {
      Error.prepareStackTrace = prepare;
      Error.stackTraceLimit = limit;
    }
  });

  it('reads no call sites, and does not throw, where Error.prepareStackTrace cannot be set', () => {
    const captured = binder();
    withReadOnly('prepareStackTrace', () => expect(readCapturedStack(captured)).toEqual(expect.any(Array)));
  });

  it('captures nothing, and does not throw, where Error.stackTraceLimit cannot be set', () => {
    withReadOnly('stackTraceLimit', () => expect(readCapturedStack(binder())).toEqual(expect.any(Array)));
  });
});

describe('callSites', () => {
  function caller(): NodeJS.CallSite[] {
    return callSites(caller, 3);
  }

  it("gives the caller's frames and leaves Error's statics as they were", () => {
    const limit = Error.stackTraceLimit;
    const prepare = Error.prepareStackTrace;
    const sites = caller();
    expect(sites.length).toBeGreaterThan(0);
    expect(Error.stackTraceLimit).toBe(limit);
    expect(Error.prepareStackTrace).toBe(prepare);
  });

  it.each(['prepareStackTrace', 'stackTraceLimit'] as const)(
    'reads no call sites, and does not throw, where Error.%s cannot be set',
    (name) => {
      withReadOnly(name, () => expect(caller()).toEqual(expect.any(Array)));
    },
  );
});
