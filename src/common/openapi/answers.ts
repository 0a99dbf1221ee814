import { SetMetadata } from '@nestjs/common';
import type { ErrorCode } from '../errors';

/** The security schemes of the OpenAPI document (see document.ts). */
export type SecuritySchemeName =
  'cookie' | 'bearer' | 'refresh_token' | 'internal' | 'telegram_webhook';

/** How a guard shows in the OpenAPI document. */
export interface GuardDoc {
  /** Schemes any one of which satisfies the guard; none when the guard checks no credentials. */
  schemes?: readonly SecuritySchemeName[];
  /** The error codes the guard answers. */
  errors: readonly ErrorCode[];
}

export const GUARD_DOC = 'openapi:guard';

/**
 * Put on a guard class: every route it guards documents these schemes and errors. The document
 * pass refuses a guard without it, so a new guard cannot leave its routes wrongly documented.
 */
export const DocumentedGuard = (doc: GuardDoc): ClassDecorator => SetMetadata(GUARD_DOC, doc);

export const ANSWERS = 'openapi:answers';

/**
 * The error codes of a route's own rules (on a handler or a controller). Those of its guards, of
 * validation and of the framework are added by the document pass; statuses come from ERROR_STATUS.
 */
export const Answers = (...codes: ErrorCode[]): MethodDecorator & ClassDecorator =>
  SetMetadata(ANSWERS, codes);
