import {
  type ArgumentMetadata,
  Injectable,
  type PipeTransform,
  ValidationPipe,
} from '@nestjs/common';
import type { ValidationError } from 'class-validator';
import { isUUID } from 'class-validator';
import { type FieldProblem, validationFailed } from './errors';

/** Flattens class-validator's nested errors into the contract's `details`. */
export function toFieldProblems(errors: ValidationError[], prefix = ''): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const error of errors) {
    const field = prefix ? `${prefix}.${error.property}` : error.property;
    for (const message of Object.values(error.constraints ?? {})) {
      problems.push({ field, message: message.replace(/^property \S+ /, '') });
    }
    if (error.children?.length) problems.push(...toFieldProblems(error.children, field));
  }
  return problems;
}

/** Validates every body and query DTO; unknown fields are rejected, never silently dropped. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
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
      throw validationFailed([{ field, message: 'must be a UUID' }]);
    }
    return value.toLowerCase();
  }
}
