import { QueryFailedError } from 'typeorm';

/** True when PostgreSQL refused a row for the unique index or constraint named. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driverError = error.driverError as { code?: string; constraint?: string };
  return (
    driverError.code === '23505' &&
    (constraint === undefined || driverError.constraint === constraint)
  );
}
