import type { NextFunction, Request, Response } from 'express';
import { errorBody } from './error-body';

/** Deeper JSON is refused: the validation pipe walks it recursively and would exhaust the stack. */
export const MAX_INPUT_DEPTH = 32;

/**
 * Keys plus array elements a body may hold, above what any ordinary route takes (a game score of
 * MAX_CLICKS = 500 clicks is 1,501). The transformation before validation costs the square of the
 * key count (80,000 keys held the event loop for seconds), so a wider body is refused before it.
 */
export const MAX_INPUT_ENTRIES = 2_000;

/**
 * Names of `Object.prototype` members: no route has such a field, and as keys they would shadow
 * what every object inherits (`__proto__` even replaces the prototype once copied by assignment).
 */
const PROTOTYPE_KEYS = new Set(Object.getOwnPropertyNames(Object.prototype));

export interface InputProblem {
  field: string;
  message: string;
}

/**
 * The first problem in a parsed body or query that no route can accept, or null: nesting deeper
 * than MAX_INPUT_DEPTH, more than `maxEntries` keys and elements, a key named like an
 * `Object.prototype` member, or a NUL character in a string or key (PostgreSQL text cannot hold it).
 * Iterative, so the check itself cannot overflow the stack; it counts before it walks. Only
 * objects and arrays are queued; strings are checked where they are met, so a report of 10,000
 * entries costs 10,000 queued visits rather than 40,000. Of several problems, the first met is
 * named.
 */
export function hostileInputProblem(
  value: unknown,
  maxEntries = MAX_INPUT_ENTRIES,
): InputProblem | null {
  if (!isContainer(value)) {
    return hasNul(value) ? { field: 'body', message: NUL_IN_STRING } : null;
  }
  // Paths are only spelled out for the answer: each entry keeps its parent and its key.
  const stack: Visit[] = [{ value, parent: null, key: '', depth: 0 }];
  let entries = 0;
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const current = visit.value;
    if (visit.depth >= MAX_INPUT_DEPTH) {
      return { field: pathOf(visit), message: `is nested deeper than ${MAX_INPUT_DEPTH} levels` };
    }
    if (Array.isArray(current)) {
      entries += current.length;
      if (entries > maxEntries) return tooMany(visit, maxEntries);
      for (let i = 0; i < current.length; i++) {
        const item: unknown = current[i];
        if (isContainer(item)) stack.push(childOf(visit, i, item));
        else if (hasNul(item))
          return { field: pathOf(childOf(visit, i, item)), message: NUL_IN_STRING };
      }
      continue;
    }
    const keys = Object.keys(current);
    entries += keys.length;
    if (entries > maxEntries) return tooMany(visit, maxEntries);
    for (const key of keys) {
      if (key.includes('\u0000'))
        return { field: pathOf(visit), message: 'keys must not contain NUL characters' };
      const item = (current as Record<string, unknown>)[key];
      if (PROTOTYPE_KEYS.has(key))
        return {
          field: pathOf(childOf(visit, key, item)),
          message: 'is not an accepted field name',
        };
      if (isContainer(item)) stack.push(childOf(visit, key, item));
      else if (hasNul(item))
        return { field: pathOf(childOf(visit, key, item)), message: NUL_IN_STRING };
    }
  }
  return null;
}

const NUL_IN_STRING = 'must not contain NUL characters';

const isContainer = (value: unknown): value is object =>
  typeof value === 'object' && value !== null;

const hasNul = (value: unknown): boolean => typeof value === 'string' && value.includes('\u0000');

interface Visit {
  value: object;
  parent: Visit | null;
  key: string | number;
  depth: number;
}

function childOf(parent: Visit, key: string | number, value: unknown): Visit {
  return { value: value as object, parent, key, depth: parent.depth + 1 };
}

function pathOf(visit: Visit): string {
  const keys: (string | number)[] = [];
  for (let at: Visit | null = visit; at?.parent; at = at.parent) keys.unshift(at.key);
  return keys.length > 0 ? keys.join('.') : 'body';
}

function tooMany(visit: Visit, maxEntries: number): InputProblem {
  return { field: pathOf(visit), message: `holds more than ${maxEntries} fields and elements` };
}

/**
 * Answers 400 VALIDATION_FAILED before any route sees such a body or query; `maxEntries` is the
 * request's budget (see body-parsing.ts).
 */
export function rejectHostileInput(
  maxEntries: (request: Request) => number,
): (request: Request, response: Response, next: NextFunction) => void {
  return (request, response, next) => {
    const problem =
      hostileInputProblem(request.body, maxEntries(request)) ?? hostileInputProblem(request.query);
    if (!problem) return next();
    response.status(400).json(
      errorBody(400, 'VALIDATION_FAILED', 'request validation failed', {
        details: [problem],
        request_id: (request as { id?: string }).id,
      }),
    );
  };
}
