import { envVarName } from '../shared/settings';
import { safeLog } from '../shared/logger';
import type { ActuatorConfig } from './types';

/*
 * The actuator is off until `management.endpoints.web.exposure.include` is set, and an off actuator says nothing
 * of itself: a newcomer looking for the live view had no way to learn the switch from the application's output.
 * This file holds the one INFO line that names it. It loads neither the server nor anything of node:http: the
 * instrumentation imports it at the top, where requiring the actuator itself would cost every application.
 */

const INCLUDE = 'management.endpoints.web.exposure.include';

let said = false;

/** Where the report page would be served with `config`'s address, port and base path. */
function viewLocation(config: ActuatorConfig): string {
  const path = `${config.basePath}/diag/view`;
  if (config.port === 0) return `${path} on the port it logs`;
  const host = config.address.includes(':') ? `[${config.address}]` : config.address;
  return `http://${host}:${config.port}${path}`;
}

/** The INFO line: what the actuator would show, the environment variable and the option that turn it on. */
export function actuatorOffMessage(config: ActuatorConfig): string {
  return (
    `actuator off: set ${envVarName(INCLUDE)}=diag (option actuator.include: ['diag']) to see the live ghost ` +
    `snapshot and the report page at ${viewLocation(config)}; the report files are written either way`
  );
}

/** Says once per process, at INFO, how to turn the actuator on; nothing when `config.include` is set. */
export function sayActuatorOffOnce(config: ActuatorConfig): void {
  if (config.include !== undefined || said) return;
  said = true;
  safeLog('info', actuatorOffMessage(config));
}
