import {
  type ArgumentMetadata,
  Injectable,
  type PipeTransform,
  ValidationPipe,
} from '@nestjs/common';
import type { ValidationError } from 'class-validator';
import { isUUID } from 'class-validator';
import { type FieldProblem, validationFailed } from './errors';
import { isWellFormed, WELL_FORMED_MESSAGE } from './visible-text';

/** Flattens class-validator's nested errors into the contract's `details`. */
export function toFieldProblems(errors: ValidationError[], prefix = ''): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const error of errors) {
    const field = prefix ? `${prefix}.${error.property}` : error.property;
    for (const [rule, message] of Object.entries(error.constraints ?? {})) {
      problems.push({ field, message: message.replace(/^property \S+ /, ''), rule });
    }
    if (error.children?.length) problems.push(...toFieldProblems(error.children, field));
  }
  return problems;
}

/** The `rule` of a string that is not well-formed Unicode. */
export const WELL_FORMED_RULE = 'isWellFormed';

/**
 * The first string (or key) of a parsed body or query that is not well-formed Unicode, as a field
 * problem. Such a string passes class-validator's rules, then PostgreSQL refuses it (a `json`
 * column) or UTF-8 silently turns it into U+FFFD (a `text` column). The body parser's hostile-input
 * check has already bounded the depth and the number of entries.
 */
export function illFormedText(value: unknown, field = ''): FieldProblem | null {
  if (typeof value === 'string') {
    return isWellFormed(value)
      ? null
      : { field: field || 'body', message: WELL_FORMED_MESSAGE, rule: WELL_FORMED_RULE };
  }
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, item] of Object.entries(value)) {
    const path = field ? `${field}.${key}` : key;
    if (!isWellFormed(key))
      return {
        field: field || 'body',
        message: `keys ${WELL_FORMED_MESSAGE}`,
        rule: WELL_FORMED_RULE,
      };
    const problem = illFormedText(item, path);
    if (problem) return problem;
  }
  return null;
}

/**
 * The validation pipe, with one rule before every DTO's own: each string in the body or query is
 * well-formed Unicode, whatever the field.
 */
class AppValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if ((metadata.type === 'body' || metadata.type === 'query') && this.toValidate(metadata)) {
      const problem = illFormedText(value);
      if (problem) throw validationFailed([problem]);
    }
    return super.transform(value, metadata) as Promise<unknown>;
  }
}

/** Validates every body and query DTO; unknown fields are rejected, never silently dropped. */
export function createValidationPipe(): ValidationPipe {
  return new AppValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: false,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => validationFailed(toFieldProblems(errors)),
  });
}

/** A path parameter that must be a UUID: anything else is 400, not a database error. */
@Injectable()
export class UuidPipe implements PipeTransform<string, string> {
  transform(value: string, metadata: ArgumentMetadata): string {
    if (typeof value !== 'string' || !isUUID(value)) {
      const field = metadata.data ?? 'id';
      throw validationFailed([{ field, message: 'must be a UUID', rule: 'isUuid' }]);
    }
    return value.toLowerCase();
  }
}
