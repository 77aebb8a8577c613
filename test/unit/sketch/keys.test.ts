import { SketchKeys } from '../../../src/sketch/nestjs/keys';

/** The ready-made key functions on request shapes as Express and Fastify hand them over. */
const express = (over: Record<string, unknown> = {}) => ({
  headers: {},
  socket: { remoteAddress: '10.0.0.9' },
  ...over,
});
const fastify = (over: Record<string, unknown> = {}) => ({ headers: {}, raw: {}, ...over });

describe('SketchKeys', () => {
  it('ip: the address the platform resolved, never X-Forwarded-For read directly', () => {
    const ip = SketchKeys.ip();
    // an untrusted client wrote X-Forwarded-For: the platform's req.ip does not follow it, nor does the key
    expect(ip(express({ ip: '10.0.0.9', headers: { 'x-forwarded-for': '1.2.3.4' } }))).toBe('10.0.0.9');
    expect(ip(fastify({ ip: '192.0.2.1' }))).toBe('192.0.2.1');
    // no req.ip (a bare node request): the socket's peer
    expect(ip(express())).toBe('10.0.0.9');
    // found wherever the handler takes it, and in a GraphQL context's req
    expect(ip({ id: 1 }, express({ ip: '10.1.1.1' }))).toBe('10.1.1.1');
    expect(ip({ req: express({ ip: '10.2.2.2' }) })).toBe('10.2.2.2');
    // no request among the arguments: no key (the decorator's onKeyError decides)
    expect(ip({ id: 1 }, 'text')).toBeUndefined();
  });

  it('header: a request header by any case of its name, the first of repeated values, nothing when absent or empty', () => {
    const apiKey = SketchKeys.header('X-Api-Key');
    expect(apiKey(express({ headers: { 'x-api-key': 'k-1' } }))).toBe('k-1');
    expect(apiKey(fastify({ headers: { 'x-api-key': ['k-2', 'k-3'] } }))).toBe('k-2');
    expect(apiKey(express({ headers: { 'x-api-key': '' } }))).toBeUndefined();
    expect(apiKey(express())).toBeUndefined();
    expect(() => SketchKeys.header('')).toThrow(TypeError);
  });

  it('user: a field of req.user, id by default; nothing before authentication', () => {
    expect(SketchKeys.user()(express({ user: { id: 42 } }))).toBe('42');
    expect(SketchKeys.user('sub')(fastify({ user: { sub: 'auth0|7' } }))).toBe('auth0|7');
    expect(SketchKeys.user()(express())).toBeUndefined();
    expect(SketchKeys.user()(express({ user: 'not an object' }))).toBeUndefined();
  });
});
