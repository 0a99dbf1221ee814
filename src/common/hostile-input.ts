import type { NextFunction, Request, Response } from 'express';
import { errorBody } from './error-body';

/** Deeper JSON is refused: the validation pipe walks it recursively and would exhaust the stack. */
export const MAX_INPUT_DEPTH = 32;

/**
 * The first problem in a parsed body or query that no route can accept, or null: nesting deeper
 * than MAX_INPUT_DEPTH, or a NUL character in a string or key (PostgreSQL text cannot hold it).
 * Iterative, so the check itself cannot overflow the stack.
 */
export function hostileInputProblem(value: unknown): { field: string; message: string } | null {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: '', depth: 0 }];
  while (stack.length > 0) {
    const { value: current, path, depth } = stack.pop()!;
    if (typeof current === 'string') {
      if (current.includes('\u0000'))
        return { field: path || 'body', message: 'must not contain NUL characters' };
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= MAX_INPUT_DEPTH) {
      return { field: path || 'body', message: `is nested deeper than ${MAX_INPUT_DEPTH} levels` };
    }
    for (const [key, child] of Object.entries(current)) {
      const childPath = path ? `${path}.${key}` : key;
      if (key.includes('\u0000'))
        return { field: path || 'body', message: 'keys must not contain NUL characters' };
      stack.push({ value: child, path: childPath, depth: depth + 1 });
    }
  }
  return null;
}

/** Answers 400 VALIDATION_FAILED before any route sees such a body or query. */
export function rejectHostileInput(request: Request, response: Response, next: NextFunction): void {
  const problem = hostileInputProblem(request.body) ?? hostileInputProblem(request.query);
  if (!problem) return next();
  response
    .status(400)
    .json(errorBody(400, 'VALIDATION_FAILED', 'request validation failed', { details: [problem] }));
}
