import type { ReferenceObject, ResponseObject, SchemaObject } from '@nestjs/swagger';
import { ERROR_STATUS, type ErrorCode } from '../common/errors';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The contract's error body (src/common/error-body.ts), and its 400 form with `details`. */
export const ERROR_SCHEMAS: Record<string, SchemaObject> = {
  FieldProblem: {
    type: 'object',
    properties: {
      field: { type: 'string', example: 'plan_name' },
      message: { type: 'string', example: 'must be a string' },
      rule: {
        type: 'string',
        description:
          'the rule that failed, a stable machine name (isString, maxLength, matches, isVisibleText, …) to put into words; absent where no named rule applies',
        example: 'isString',
      },
    },
    required: ['field', 'message'],
  },
  ErrorBody: {
    type: 'object',
    properties: {
      statusCode: { type: 'integer', example: 404 },
      error: { type: 'string', example: 'Not Found' },
      code: { type: 'string', description: 'stable machine code', example: 'NOT_FOUND' },
      message: { type: 'string', description: 'for people' },
      details: { type: 'array', items: ref('FieldProblem') },
      request_id: {
        type: 'string',
        description: 'the request id, as in X-Request-Id and the access-log line',
      },
    },
    required: ['statusCode', 'error', 'code', 'message'],
    additionalProperties: false,
  },
  ValidationErrorBody: {
    allOf: [ref('ErrorBody'), { type: 'object', required: ['details'] }],
  },
};

/** Statuses whose answers may say when to come back. */
const RETRY_AFTER: Record<number, boolean> = { 429: true, 503: false };

/**
 * One answer per status the codes map to in ERROR_STATUS, in the table's order: each a reference
 * into `responses` (components.responses), where it is added once under a name of its codes.
 */
export function errorResponses(
  codes: ReadonlySet<ErrorCode>,
  responses: Record<string, ResponseObject>,
): Map<string, ReferenceObject> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of Object.keys(ERROR_STATUS) as ErrorCode[]) {
    if (!codes.has(code)) continue;
    const status: number = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const references = new Map<string, ReferenceObject>();
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const list = byStatus.get(status) ?? [];
    const response: ResponseObject = {
      description: list.join(', '),
      content: {
        'application/json': {
          schema: {
            allOf: [
              ref(status === 400 ? 'ValidationErrorBody' : 'ErrorBody'),
              { type: 'object', properties: { code: { type: 'string', enum: list } } },
            ],
          },
        },
      },
    };
    if (status in RETRY_AFTER) {
      response.headers = {
        'Retry-After': {
          description: 'seconds to wait before trying again',
          required: RETRY_AFTER[status],
          schema: { type: 'string', pattern: '^[0-9]+$' },
        },
      };
    }
    const name = `Error${status}_${list.join('_')}`;
    responses[name] = response;
    references.set(String(status), { $ref: `#/components/responses/${name}` });
  }
  return references;
}
