import express, {
  type ErrorRequestHandler,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import getRawBody from 'raw-body';
import type { Settings } from '../config/settings';
import { ByteBudget } from './concurrency/byte-budget';
import { errorBody } from './error-body';
import { MAX_INPUT_DEPTH, MAX_INPUT_ENTRIES, rejectHostileInput } from './hostile-input';
import { type JsonShapeLimits, jsonShapeProblem } from './json-shape';

/**
 * Routes that take a large body, with their own byte limit (BODY_LIMIT_LARGE) and entry budget: a
 * node's traffic report of 10,000 entries (about 1 MB). Every other route takes a few hundred bytes.
 * Only callers holding the internal secret or a node's own secret (`isInternalCaller`) get them;
 * anyone else gets the usual limits (and then the guard's 401).
 */
export const LARGE_BODY_ROUTES: readonly string[] = ['/api/v1/internal/traffic'];
/** Keys and elements of a large body: 10,000 report entries of a few fields each. */
export const MAX_LARGE_INPUT_ENTRIES = 100_000;

/**
 * A large-body route that reads its bodies itself: `read` takes the raw bytes and gives the
 * route's input, checked whole and marked `CHECKED_BODY`, or null for a body it does not plainly
 * take, which then goes the general way (counted, parsed, checked) as any other. `answer`, when
 * given, is handed a request whose body `read` took, to answer it at once (a lane, see
 * `src/common/lane.ts`) or pass it on (`next`) to the rest of the pipeline.
 */
export interface BodyReader {
  read: (raw: Buffer) => object | null;
  answer?: RequestHandler;
}

/** The large-body routes that read their bodies themselves, by path. */
export type BodyReaders = ReadonlyMap<string, BodyReader>;

/** The content types a body reader reads; any other (a charset named, say) goes the general way. */
export const PLAIN_JSON = /^application\/json(?:;\s*charset=utf-8)?$/i;

/**
 * The routes anyone may call before signing in, and the bytes their bodies take at most: a seed,
 * a password and a code, a Telegram login's few fields, a token. Far under BODY_LIMIT, so that a
 * flood of large bodies at the doors with no account behind them is refused on its declared
 * length, unread (413), instead of being read and counted. 8 KB holds the largest valid one
 * with room: a Telegram login whose names are 256 characters of 4 bytes each and whose photo
 * address is 2,048 characters is about 4.5 KB. Every other route takes BODY_LIMIT (or
 * BODY_LIMIT_LARGE, above).
 */
export const SIGN_IN_ROUTES =
  /^\/api\/v1\/auth\/(seed|seed\/login|telegram|exchange|refresh|admin\/login|bot\/login-codes(\/[^/]+\/poll)?)\/?$/i;
export const SIGN_IN_BODY_LIMIT = '8kb';

/**
 * Nesting the raw-text count refuses unparsed. Twice the parsed check's MAX_INPUT_DEPTH: a body
 * between the two is cheap to parse, and the parsed check's answer names the field that nests.
 */
export const MAX_SCANNED_DEPTH = 2 * MAX_INPUT_DEPTH;

/**
 * JSON body parsing with a byte limit per route, a count of the raw text's nesting and entries
 * against the route's budget before anything is built (`json-shape.ts`), then the hostile-input
 * check of the parsed value; all run before any transformation or validation. Compressed bodies are
 * refused (415): no client of this API compresses requests, and inflating is an attacker's lever.
 */
export function bodyParsing(
  settings: Settings,
  isInternalCaller: (secret: string) => Promise<boolean>,
  readers: BodyReaders = new Map(),
): (RequestHandler | ErrorRequestHandler)[] {
  const mayBeLarge = async (request: Request): Promise<boolean> => {
    if (!LARGE_BODY_ROUTES.includes(request.path)) return false;
    const given = request.header('x-internal-secret');
    return given !== undefined && (await isInternalCaller(given));
  };
  /** Decided once per request by `parse`, before the body is read. */
  const large = new WeakSet<Request>();
  const isLarge = (request: Request): boolean => large.has(request);
  const small = jsonBody(settings.bodyLimit, {
    maxDepth: MAX_SCANNED_DEPTH,
    maxEntries: MAX_INPUT_ENTRIES,
  });
  const largeShape = { maxDepth: MAX_SCANNED_DEPTH, maxEntries: MAX_LARGE_INPUT_ENTRIES };
  const largeParser = jsonBody(settings.bodyLimitLarge, largeShape);
  // The sign-in routes' limit, or BODY_LIMIT when an operator set that lower still.
  const signInLimit =
    sizeInBytes(SIGN_IN_BODY_LIMIT) < sizeInBytes(settings.bodyLimit)
      ? SIGN_IN_BODY_LIMIT
      : settings.bodyLimit;
  const signIn = jsonBody(signInLimit, {
    maxDepth: MAX_SCANNED_DEPTH,
    maxEntries: MAX_INPUT_ENTRIES,
  });
  const smallBytes = sizeInBytes(settings.bodyLimit);
  const signInBytes = sizeInBytes(signInLimit);
  const largeBytes = sizeInBytes(settings.bodyLimitLarge);
  /**
   * A large body of a route with its own reader: read whole, then offered to the reader; a body it
   * does not take is counted, parsed and refused as `jsonBody` would, from the bytes already read.
   */
  const readLarge: RequestHandler = (request, response, next) => {
    const reader = readers.get(request.path);
    const { headers } = request;
    const declared = Number(headers['content-length']);
    if (
      reader === undefined ||
      !(declared > 0) ||
      headers['transfer-encoding'] !== undefined ||
      !PLAIN_JSON.test(headers['content-type'] ?? '')
    ) {
      return largeParser(request, response, next);
    }
    getRawBody(request, { length: declared, limit: largeBytes }, (error, raw) => {
      // raw-body's errors are the body parser's own (it reads with raw-body): refused alike.
      if (error) return next(error);
      const read = reader.read(raw);
      if (read !== null) {
        request.body = read;
        return reader.answer ? reader.answer(request, response, next) : next();
      }
      const parsed = parseJsonBytes(raw, largeShape);
      if ('refusal' in parsed) return next(parsed.refusal);
      request.body = parsed.body;
      next();
    });
  };
  // A burst of 50 full reports read and parsed at once took about 45 MiB more resident memory.
  const largeBodies = new ByteBudget(sizeInBytes(settings.largeBodiesInMemory));
  const parse: RequestHandler = (request, response, next) => {
    mayBeLarge(request).then(
      (wide) => {
        if (wide) large.add(request);
        const signingIn = !wide && SIGN_IN_ROUTES.test(request.path);
        const limit = wide ? largeBytes : signingIn ? signInBytes : smallBytes;
        const refusal = refusedUpFront(request, limit);
        if (refusal) return refuse(request, response, refusal.status, refusal.type);
        if (signingIn) return signIn(request, response, next);
        if (!wide) return small(request, response, next);
        // Held from reading the body to the answer; without a declared length, the most it may be.
        const declared = Number(request.headers['content-length']);
        void largeBodies.acquire(declared > 0 ? declared : largeBytes).then((release) => {
          if (request.socket.destroyed || response.writableEnded) return release();
          response.once('close', release);
          readLarge(request, response, next);
        });
      },
      (error: unknown) => next(error),
    );
  };
  return [
    parse,
    bodyParserErrors,
    rejectHostileInput((request) =>
      isLarge(request) ? MAX_LARGE_INPUT_ENTRIES : MAX_INPUT_ENTRIES,
    ),
  ];
}

/** The body parser's error type of a body refused by its shape, before it was parsed. */
const SHAPE_REFUSED = 'entity.shape.refused';

/**
 * Reads a JSON body of at most `limit` (as BODY_LIMIT writes it), counts its nesting and entries
 * against `shape` and only then parses it; errors go to `next`.
 */
export function jsonBody(limit: string, shape: JsonShapeLimits): RequestHandler {
  return express.json({
    limit,
    strict: true,
    inflate: false,
    type: ['application/json', 'application/*+json'],
    // Called with the raw bytes before JSON.parse; what it throws is the request's error.
    verify: (_request, _response, raw) => {
      const refusal = shapeRefusal(raw, shape);
      if (refusal !== null) throw refusal;
    },
  });
}

/**
 * A UTF-8 JSON body's bytes as `jsonBody` takes them: counted against `shape`, decoded (a byte
 * order mark dropped, as the body parser decodes), parsed strictly; the body, or the refusal to
 * raise (`bodyParserErrors` answers it).
 */
export function parseJsonBytes(
  raw: Buffer,
  shape: JsonShapeLimits,
): { body: unknown } | { refusal: object } {
  const refusal = shapeRefusal(raw, shape);
  if (refusal !== null) return { refusal };
  const text = raw.toString('utf8');
  const body = parseStrictJson(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  return body === undefined ? { refusal: JSON_PARSE_FAILED } : { body };
}

/** The error a body past `shape`'s limits is refused with (`bodyParserErrors`), or null. */
function shapeRefusal(raw: Buffer, shape: JsonShapeLimits): Error | null {
  const problem = jsonShapeProblem(raw, shape);
  if (problem === null) return null;
  const message =
    problem === 'too-deep'
      ? `is nested deeper than ${shape.maxDepth} levels`
      : `holds more than ${shape.maxEntries} fields and elements`;
  return Object.assign(new Error(message), { status: 400, type: SHAPE_REFUSED });
}

/** How the body parser reports malformed JSON, so that the same refusal answers it. */
export const JSON_PARSE_FAILED = Object.freeze({ type: 'entity.parse.failed', status: 400 });

/**
 * A JSON object or array, as the body parser's strict mode takes it; undefined for anything else
 * (then refused as malformed, as the body parser would).
 */
export function parseStrictJson(text: string): unknown {
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Bytes of a size as BODY_LIMIT writes it (validated in settings.ts): `512`, `64kb`, `2mb`. */
export function sizeInBytes(size: string): number {
  const match = /^(\d+)(b|kb|mb)?$/i.exec(size);
  if (!match) return 0;
  const unit = (match[2] ?? 'b').toLowerCase();
  return Number(match[1]) * (unit === 'mb' ? 1024 * 1024 : unit === 'kb' ? 1024 : 1);
}

/**
 * A body refused on its headers alone: a declared length over the limit, or a compression. The
 * body parser would read the whole body before answering; this answers at once.
 */
function refusedUpFront(request: Request, limit: number): { status: number; type: string } | null {
  const length = request.headers['content-length'];
  if (length !== undefined && Number(length) > limit)
    return { status: 413, type: 'entity.too.large' };
  const encoding = request.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity')
    return { status: 415, type: 'encoding.unsupported' };
  return null;
}

/**
 * Malformed JSON is a 400, an oversized body a 413 and a compressed one a 415, in the contract's
 * body with the request id, never an HTML page or a 500.
 */
const bodyParserErrors: ErrorRequestHandler = (
  error: { type?: string; status?: number; message?: string },
  request,
  res,
  next,
) => {
  if (!error || typeof error !== 'object' || !('type' in error)) return next(error);
  const status =
    typeof error.status === 'number' && error.status >= 400 && error.status < 500
      ? error.status
      : 400;
  refuse(
    request,
    res,
    status,
    error.type,
    error.type === SHAPE_REFUSED ? error.message : undefined,
  );
};

function refuse(
  request: Request,
  res: Response,
  status: number,
  type: string | undefined,
  shapeMessage?: string,
): void {
  const code =
    status === 413
      ? 'PAYLOAD_TOO_LARGE'
      : status === 415
        ? 'UNSUPPORTED_MEDIA_TYPE'
        : 'VALIDATION_FAILED';
  const message =
    shapeMessage !== undefined
      ? `request body ${shapeMessage}`
      : type === 'entity.parse.failed'
        ? 'request body is not valid JSON'
        : status === 413
          ? 'request body is too large'
          : type === 'encoding.unsupported'
            ? 'compressed request bodies (Content-Encoding) are not accepted'
            : 'request body could not be read';
  // The rest of a refused body may be unread: the connection cannot carry another request.
  if (status === 413 || status === 415) res.setHeader('Connection', 'close');
  // A 400 is a validation failure like any other: its `details` name what failed, the body.
  const details =
    status === 400 ? [{ field: 'body', message: shapeMessage ?? message }] : undefined;
  res
    .status(status)
    .json(
      errorBody(status, code, message, { details, request_id: (request as { id?: string }).id }),
    );
}
