import type { INestApplication } from '@nestjs/common';
import type { ApplicationConfig } from '@nestjs/core';

/**
 * nestjs-cls registers a global guard and a global interceptor whether or not it is mounted on
 * requests. It is not here (the transactional plugin opens its own context per transaction), and
 * then both are object literals that do nothing: `canActivate: () => true` and
 * `intercept: (_, next) => next.handle()`. They are not free: while any global interceptor exists,
 * Nest runs every request through its interceptor chain (async resources and observables), about
 * a fifth of the CPU of a small request (bench/RESULTS.md). So they are taken out, before the
 * routes are built.
 *
 * Only object literals with that one method go: every enhancer of this application is an instance
 * of a class, and so is nestjs-cls's own when it is mounted. Nest keeps the lists on the application's private `config`;
 * were it ever renamed, nothing is removed and only speed is lost (a test watches for that).
 */
export function dropInertClsEnhancers(app: INestApplication): void {
  const config = (app as unknown as { config?: ApplicationConfig }).config;
  if (!config) return;
  removeLiterals(config.getGlobalInterceptors(), 'intercept');
  removeLiterals(config.getGlobalGuards(), 'canActivate');
}

function removeLiterals(enhancers: object[], method: 'canActivate' | 'intercept'): void {
  for (let i = enhancers.length - 1; i >= 0; i--) {
    const enhancer = enhancers[i];
    const keys = Object.keys(enhancer);
    if (
      Object.getPrototypeOf(enhancer) === Object.prototype &&
      keys.length === 1 &&
      keys[0] === method
    ) {
      enhancers.splice(i, 1);
    }
  }
}
