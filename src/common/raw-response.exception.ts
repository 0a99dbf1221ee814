import { HttpException } from '@nestjs/common';

/**
 * An error answered with its own body instead of the contract's error body. Only `GET /health`
 * uses it: load balancers read its `{status, db}` body.
 */
export class RawResponseException extends HttpException {}
