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

/**
 * The key of a body that its route's own reader took from the raw bytes (`BodyReaders` in
 * body-parsing.ts), having checked it whole as this check and the route's pipe would: only keys
 * the route knows, no NUL, within the route's budget. No parsed JSON can carry a symbol key, so a
 * client cannot send one; such a body is passed as it is.
 */
export const CHECKED_BODY = Symbol('checked body');

/** Whether `body` was read and checked by its route's own reader (`CHECKED_BODY`). */
export const isCheckedBody = (body: unknown): boolean =>
  typeof body === 'object' && body !== null && CHECKED_BODY in body;

export interface InputProblem {
  field: string;
  message: string;
}

/**
 * The first problem in a parsed body or query that no route can accept, or null: nesting deeper
 * than MAX_INPUT_DEPTH, more than `maxEntries` keys and elements, a key named like an
 * `Object.prototype` member, or a NUL character in a string or key (PostgreSQL text cannot hold it).
 * Iterative, so the check itself cannot overflow the stack; it counts before it walks. Only
 * objects and arrays are queued, with their depth and nothing else: a report of 10,000 entries
 * costs 10,000 queued visits and no object for each (they were 1.6 MB of garbage a report); the
 * path of a problem is looked up only once there is one (`fieldOf`). Of several problems, the
 * first met is named.
 */
export function hostileInputProblem(
  value: unknown,
  maxEntries = MAX_INPUT_ENTRIES,
): InputProblem | null {
  if (!isContainer(value)) {
    return hasNul(value) ? { field: 'body', message: NUL_IN_STRING } : null;
  }
  const containers: object[] = [value];
  const depths: number[] = [0];
  let entries = 0;
  while (containers.length > 0) {
    const current = containers.pop()!;
    const depth = depths.pop()!;
    if (depth >= MAX_INPUT_DEPTH) {
      return {
        field: fieldOf(value, current),
        message: `is nested deeper than ${MAX_INPUT_DEPTH} levels`,
      };
    }
    if (Array.isArray(current)) {
      entries += current.length;
      if (entries > maxEntries) return tooMany(value, current, maxEntries);
      for (let i = 0; i < current.length; i++) {
        const item: unknown = current[i];
        if (isContainer(item)) {
          containers.push(item);
          depths.push(depth + 1);
        } else if (hasNul(item)) {
          return { field: fieldOf(value, current, i), message: NUL_IN_STRING };
        }
      }
      continue;
    }
    const keys = Object.keys(current);
    entries += keys.length;
    if (entries > maxEntries) return tooMany(value, current, maxEntries);
    for (const key of keys) {
      if (key.includes('\u0000'))
        return { field: fieldOf(value, current), message: 'keys must not contain NUL characters' };
      const item = (current as Record<string, unknown>)[key];
      if (PROTOTYPE_KEYS.has(key))
        return { field: fieldOf(value, current, key), message: 'is not an accepted field name' };
      if (isContainer(item)) {
        containers.push(item);
        depths.push(depth + 1);
      } else if (hasNul(item)) {
        return { field: fieldOf(value, current, key), message: NUL_IN_STRING };
      }
    }
  }
  return null;
}

const NUL_IN_STRING = 'must not contain NUL characters';

const isContainer = (value: unknown): value is object =>
  typeof value === 'object' && value !== null;

const hasNul = (value: unknown): boolean => typeof value === 'string' && value.includes('\u0000');

/**
 * The field an answer names for `container` within `root` (then its `key`): the keys on the way,
 * joined by dots, or `body` for the root itself.
 */
function fieldOf(root: object, container: object, key?: string | number): string {
  const path = pathTo(root, container, 0) ?? [];
  if (key !== undefined) path.push(String(key));
  return path.length > 0 ? path.join('.') : 'body';
}

/**
 * The keys from `at` down to `target`, found depth first by identity (a parsed body holds each
 * object once), or null. Recursive, but never deeper than MAX_INPUT_DEPTH, where the walk above
 * stops; run only for a body that is refused.
 */
function pathTo(at: object, target: object, depth: number): string[] | null {
  if (at === target) return [];
  if (depth >= MAX_INPUT_DEPTH) return null;
  for (const [key, item] of Object.entries(at)) {
    if (!isContainer(item)) continue;
    const rest = pathTo(item, target, depth + 1);
    if (rest !== null) {
      rest.unshift(key);
      return rest;
    }
  }
  return null;
}

function tooMany(root: object, container: object, maxEntries: number): InputProblem {
  return {
    field: fieldOf(root, container),
    message: `holds more than ${maxEntries} fields and elements`,
  };
}

/**
 * Answers 400 VALIDATION_FAILED before any route sees such a body or query; `maxEntries` is the
 * request's budget (see body-parsing.ts).
 */
export function rejectHostileInput(
  maxEntries: (request: Request) => number,
): (request: Request, response: Response, next: NextFunction) => void {
  return (request, response, next) => {
    const body: unknown = request.body;
    const problem =
      (isCheckedBody(body) ? null : hostileInputProblem(body, maxEntries(request))) ??
      hostileInputProblem(request.query);
    if (!problem) return next();
    response.status(400).json(
      errorBody(400, 'VALIDATION_FAILED', 'request validation failed', {
        details: [problem],
        request_id: (request as { id?: string }).id,
      }),
    );
  };
}
