import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Tests that need a system program (a Prometheus server, a Redis server) run when the program is installed and are
 * skipped visibly when it is not, naming the package that provides it: `npm ci && npm test` must pass on a
 * machine with Node.js alone. CI sets DIAG_REQUIRE_SERVICES=1, which turns an absent program into a failure,
 * so the service-backed tests can never be skipped there.
 */
export interface ServiceProgram {
  /** The executable looked up on PATH. */
  readonly program: string;
  /** An environment variable that names the executable's path explicitly. */
  readonly envVar: string;
  /** The Debian package that provides it. */
  readonly debianPackage: string;
}

export const SERVICES = {
  prometheus: { program: 'prometheus', envVar: 'PROMETHEUS_BIN', debianPackage: 'prometheus' },
  promtool: { program: 'promtool', envVar: 'PROMTOOL_BIN', debianPackage: 'prometheus' },
  redis: { program: 'redis-server', envVar: 'REDIS_SERVER_BIN', debianPackage: 'redis-server' },
  chromium: { program: 'chromium', envVar: 'CHROMIUM_BIN', debianPackage: 'chromium' },
} as const satisfies Record<string, ServiceProgram>;

export type ServiceName = keyof typeof SERVICES;

/** The environment variable CI sets so that a missing service fails the run instead of skipping. */
export const REQUIRE_SERVICES_ENV = 'DIAG_REQUIRE_SERVICES';

export function servicesRequired(): boolean {
  return process.env[REQUIRE_SERVICES_ENV] === '1';
}

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The program's path: the explicit environment variable, else the first match on PATH; undefined if absent. */
export function findProgram(name: ServiceName): string | undefined {
  const service = SERVICES[name];
  const explicit = process.env[service.envVar];
  if (explicit) {
    if (executable(explicit)) return explicit;
    throw new Error(`${service.envVar}=${explicit} is not an executable file`);
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && executable(path.join(dir, service.program))) return path.join(dir, service.program);
  }
  return undefined;
}

/** One line that says what is missing and how to install it. */
export function missingServiceMessage(name: ServiceName): string {
  const s = SERVICES[name];
  return `\`${s.program}\` not found on PATH: install it with \`apt-get install -y ${s.debianPackage}\` (or set ${s.envVar})`;
}

/**
 * `describe` when the program is present; otherwise a skipped `describe` whose title says why — or, under
 * DIAG_REQUIRE_SERVICES=1, a failing test with the same message.
 */
export function describeWithService(name: ServiceName, title: string, body: (bin: string) => void): void {
  const bin = findProgram(name);
  if (bin) {
    describe(title, () => body(bin));
    return;
  }
  const message = missingServiceMessage(name);
  if (servicesRequired()) {
    describe(title, () => {
      it(`needs ${SERVICES[name].program}`, () => {
        throw new Error(`${message}; ${REQUIRE_SERVICES_ENV}=1 makes a missing service a failure`);
      });
    });
    return;
  }
  describe.skip(`${title} — skipped: ${message}`, () => body(''));
}
