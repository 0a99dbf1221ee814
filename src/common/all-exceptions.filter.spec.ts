import { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { QueryFailedError } from 'typeorm';
import { answerError } from './all-exceptions.filter';

/** What the filter answered: status and body, on a response that only records. */
function answer(exception: unknown): { status: number; body: Record<string, unknown> } {
  const sent = { status: 0, body: {} as Record<string, unknown> };
  const response = {
    headersSent: false,
    setHeader: () => response,
    status(code: number) {
      sent.status = code;
      return response;
    },
    json(body: Record<string, unknown>) {
      sent.body = body;
      return response;
    },
  };
  const request = { id: 'req-1', method: 'POST', path: '/api/v1/anything' };
  answerError(exception, request as unknown as Request, response as unknown as Response);
  return sent;
}

const refused = (code: string, message: string) =>
  new QueryFailedError(
    'INSERT INTO audit_log …',
    ['secret'],
    Object.assign(new Error(message), { code }),
  );

describe('the error filter and values PostgreSQL cannot take', () => {
  beforeAll(() => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });
  afterAll(() => jest.restoreAllMocks());

  it.each([
    ['22P02', 'invalid input syntax for type json'],
    ['22021', 'invalid byte sequence for encoding "UTF8": 0xed 0xa0 0x80'],
    ['22P05', 'unsupported Unicode escape sequence'],
  ])('%s is 400 VALIDATION_FAILED, never 500', (code, message) => {
    const { status, body } = answer(refused(code, message));
    expect(status).toBe(400);
    expect(body).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      code: 'VALIDATION_FAILED',
      message: 'request validation failed',
      details: [{ field: 'body', message: 'holds a value the database cannot store' }],
      request_id: 'req-1',
    });
  });

  it('any other database error stays a 500 that reveals nothing', () => {
    const { status, body } = answer(refused('42P01', 'relation "nope" does not exist'));
    expect(status).toBe(500);
    expect(body).toEqual(expect.objectContaining({ code: 'INTERNAL', message: 'internal error' }));
  });
});
