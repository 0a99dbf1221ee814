import { STATUS_CODES } from 'node:http';
import { type FieldProblem } from './errors';

/** The contract's error body. */
export interface ErrorBody {
  statusCode: number;
  error: string;
  code: string;
  message: string;
  details?: FieldProblem[];
  request_id?: string;
}

export function errorBody(
  status: number,
  code: string,
  message: string,
  extra: Pick<ErrorBody, 'details' | 'request_id'> = {},
): ErrorBody {
  return { statusCode: status, error: STATUS_CODES[status] ?? 'Error', code, message, ...extra };
}
