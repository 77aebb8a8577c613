import { DiagError } from '../shared/errors';

/**
 * The actuator could not listen (port in use, address not available, permission denied). It is logged as a
 * warning and `startActuator` resolves undefined: the host application carries on without the actuator.
 */
export class ActuatorListenError extends DiagError {
  /** The system error code, e.g. `EADDRINUSE`. */
  readonly systemCode: string | undefined;

  constructor(message: string, systemCode: string | undefined, cause?: unknown) {
    super('ERR_ACTUATOR_LISTEN_FAILED', message, { cause });
    this.systemCode = systemCode;
  }
}
