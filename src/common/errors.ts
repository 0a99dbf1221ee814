import { HttpStatus } from '@nestjs/common';

/** Every machine code of the contract, with the status it answers. */
export const ERROR_STATUS = {
  VALIDATION_FAILED: HttpStatus.BAD_REQUEST,
  UNAUTHENTICATED: HttpStatus.UNAUTHORIZED,
  REFRESH_INVALID: HttpStatus.UNAUTHORIZED,
  REFRESH_REUSED: HttpStatus.UNAUTHORIZED,
  BOOTSTRAP_INVALID: HttpStatus.UNAUTHORIZED,
  INVALID_CREDENTIALS: HttpStatus.UNAUTHORIZED,
  TOTP_REQUIRED: HttpStatus.UNAUTHORIZED,
  TOTP_INVALID: HttpStatus.UNAUTHORIZED,
  TELEGRAM_AUTH_INVALID: HttpStatus.UNAUTHORIZED,
  INTERNAL_SECRET_INVALID: HttpStatus.UNAUTHORIZED,
  SUBSCRIPTION_REQUIRED: HttpStatus.PAYMENT_REQUIRED,
  FORBIDDEN: HttpStatus.FORBIDDEN,
  ORIGIN_REJECTED: HttpStatus.FORBIDDEN,
  TRIAL_TELEGRAM_ONLY: HttpStatus.FORBIDDEN,
  ACCOUNT_BLOCKED: HttpStatus.FORBIDDEN,
  NO_USER: HttpStatus.NOT_FOUND,
  NO_TICKETS: HttpStatus.NOT_FOUND,
  NOT_FOUND: HttpStatus.NOT_FOUND,
  CONFLICT: HttpStatus.CONFLICT,
  USERNAME_TAKEN: HttpStatus.CONFLICT,
  TRIAL_USED: HttpStatus.CONFLICT,
  TICKET_CLOSED: HttpStatus.CONFLICT,
  INVOICE_NOT_PENDING: HttpStatus.CONFLICT,
  PAYMENT_NOT_FOUND: HttpStatus.CONFLICT,
  INSUFFICIENT_BALANCE: HttpStatus.CONFLICT,
  WITHDRAWAL_STATE: HttpStatus.CONFLICT,
  ALREADY_ATTACHED: HttpStatus.CONFLICT,
  ROUND_FINISHED: HttpStatus.CONFLICT,
  ROUND_EXPIRED: HttpStatus.CONFLICT,
  NODE_BUSY: HttpStatus.CONFLICT,
  PAYMENT_TOO_SMALL: HttpStatus.CONFLICT,
  DEVICE_LIMIT: HttpStatus.CONFLICT,
  PAYLOAD_TOO_LARGE: HttpStatus.PAYLOAD_TOO_LARGE,
  UNSUPPORTED_MEDIA_TYPE: HttpStatus.UNSUPPORTED_MEDIA_TYPE,
  METHOD_NOT_ALLOWED: HttpStatus.METHOD_NOT_ALLOWED,
  RATE_LIMITED: HttpStatus.TOO_MANY_REQUESTS,
  UPSTREAM_UNAVAILABLE: HttpStatus.SERVICE_UNAVAILABLE,
  INTERNAL: HttpStatus.INTERNAL_SERVER_ERROR,
} as const satisfies Record<string, HttpStatus>;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface FieldProblem {
  field: string;
  message: string;
  /**
   * Which rule failed, as a stable machine name (class-validator's constraint name: `isVisibleText`,
   * `maxLength`, `matches`, …), so a front end can say it in the user's language; `message` is
   * English for people reading the raw answer. Absent where no named rule applies.
   */
  rule?: string;
}

/**
 * A failure the caller can act on. Services throw it with a code; the global filter turns it into
 * the contract's error body and status.
 */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: FieldProblem[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/** Problems listed in one answer: enough to fix a request, and the body stays small. */
export const MAX_DETAILS = 20;

export function validationFailed(
  details: FieldProblem[],
  message = 'request validation failed',
): AppError {
  return new AppError('VALIDATION_FAILED', message, details.slice(0, MAX_DETAILS));
}
