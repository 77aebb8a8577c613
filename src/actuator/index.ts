/** The side actuator: a small `node:http` server for the ghost snapshot, the start-up report and sketches. */
export { startActuator } from './server';
export { ActuatorRouter, parseTarget, errorResponse, MAX_URL_LENGTH, MAX_SKETCH_ID_LENGTH, ALLOW } from './routes';
export type { ActuatorResponse, RouterOptions } from './routes';
export { resolveExposure, ENDPOINT_IDS } from './exposure';
export type { EndpointId, Exposure } from './exposure';
export { actuatorSources, ghostTrackingDisabled, EMPTY_SKETCH_REGISTRY } from './sources';
export type { ActuatorSourceParts } from './sources';
export { humanSize } from './format';
export { ActuatorListenError } from './errors';
export type { ActuatorConfig, ActuatorHandle, ActuatorOptions, ActuatorSources } from './types';
