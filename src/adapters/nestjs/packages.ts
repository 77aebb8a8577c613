/**
 * The packages the NestJS adapter hooks, apart from its module definitions: the registry names them up front so
 * that the definitions (and the adapter's code) are built only when one of them loads.
 */

/**
 * Nest packages whose exports are recorded as library classes, so that their modules' providers count as
 * framework beans even in an ESM application, where `require.cache` holds none of them.
 */
export const NEST_LIBRARY_PACKAGES = [
  '@nestjs/common',
  '@nestjs/schedule',
  '@nestjs/event-emitter',
  '@nestjs/microservices',
  '@nestjs/websockets',
  '@nestjs/graphql',
  '@nestjs/cqrs',
  '@nestjs/terminus',
  '@nestjs/bull',
  '@nestjs/bullmq',
  '@nestjs/passport',
  '@nestjs/jwt',
  '@nestjs/config',
  '@nestjs/typeorm',
  '@nestjs/mongoose',
  '@nestjs/sequelize',
  '@nestjs/throttler',
  '@nestjs/axios',
  '@nestjs/cache-manager',
  '@nestjs/platform-express',
  '@nestjs/platform-fastify',
  '@nestjs/swagger',
];
