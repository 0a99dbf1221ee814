import { useInfiniteQuery } from '@tanstack/react-query';
import type { components, paths } from '../../../client/src/schema';
import { api, type HttpMethod } from '../api/client';

/** The service's own shapes, by their OpenAPI names (client/src/schema.d.ts). */
export type Schemas = components['schemas'];

/** The API's routes as the app names them: under /api/v1, with `{name}` for a path parameter. */
type Route = keyof paths extends infer K ? (K extends `/api/v1${infer P}` ? P : never) : never;

/** The generated document's operation of a method and route; `undefined` where it has none. */
type OperationOf<M extends HttpMethod, P extends Route> = paths[`/api/v1${P}`][Lowercase<M>];

/** The routes that answer a method. */
export type RouteOf<M extends HttpMethod> = {
  [P in Route]: OperationOf<M, P> extends { responses: unknown } ? P : never;
}[Route];

type Operation<M extends HttpMethod, P extends RouteOf<M>> = NonNullable<OperationOf<M, P>>;

/** The success answer's JSON, `void` for a 204 (or a 202 without a body). */
type Json<R> = R extends { content: { 'application/json': infer B } } ? B : void;
export type Answer<M extends HttpMethod, P extends RouteOf<M>> =
  Operation<M, P> extends { responses: infer R }
    ? Json<R[keyof R & (200 | 201 | 202 | 204)]>
    : never;

type PathParams<O> = O extends { parameters: { path: infer X } } ? X : never;
type QueryParams<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
type Body<O> = O extends { requestBody?: infer B }
  ? [NonNullable<B>] extends [never]
    ? never
    : NonNullable<B> extends { content: { 'application/json': infer J } }
      ? J
      : never
  : never;

/** What a call of a route takes besides its route: each part only where the route has it. */
export type CallOptions<M extends HttpMethod, P extends RouteOf<M>> = ([
  PathParams<Operation<M, P>>,
] extends [never]
  ? unknown
  : { path: PathParams<Operation<M, P>> }) &
  ([QueryParams<Operation<M, P>>] extends [never]
    ? unknown
    : { query?: QueryParams<Operation<M, P>> }) &
  ([Body<Operation<M, P>>] extends [never] ? unknown : { body: Body<Operation<M, P>> });

/** The options argument: required when the route has a path parameter or a body. */
type OptionsArgument<M extends HttpMethod, P extends RouteOf<M>> =
  Record<never, never> extends CallOptions<M, P>
    ? [options?: CallOptions<M, P>]
    : [options: CallOptions<M, P>];

type Query = Record<string, string | number | boolean | null | undefined>;

/** The route with its `{name}` parameters filled in, each encoded. */
function filled(route: string, path: Record<string, string> | undefined): string {
  return route.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = path?.[name];
    if (value === undefined) throw new Error(`${route}: no value for {${name}}`);
    return encodeURIComponent(value);
  });
}

/**
 * One staff route, typed by the service's OpenAPI document (client/src/schema.d.ts): the route
 * must exist for the method, its path parameters, query and body are the document's, and so is
 * the answer. Goes through the app's client, so the session rule (refresh once on 401) holds.
 */
export function staffCall<M extends HttpMethod, P extends RouteOf<M>>(
  method: M,
  route: P,
  ...[options]: OptionsArgument<M, P>
): Promise<Answer<M, P>> {
  const parts = (options ?? {}) as { path?: Record<string, string>; query?: Query; body?: unknown };
  return api.request<Answer<M, P>>(method, filled(route, parts.path), {
    query: parts.query,
    body: parts.body,
  });
}

/** A page of a cursor-paged list, as every paged route of the service answers. */
export interface CursorPage<T> {
  items: T[];
  next_cursor: string | null;
}

/** The routes that answer GET with a cursor-paged list. */
export type PagedRoute = {
  [P in RouteOf<'GET'>]: Answer<'GET', P> extends CursorPage<unknown> ? P : never;
}[RouteOf<'GET'>];

/** A paged route's query without its cursor (the list moves the cursor itself). */
export type ListQuery<P extends PagedRoute> = Omit<
  NonNullable<QueryParams<Operation<'GET', P>>>,
  'cursor'
>;

/**
 * A cursor-paged staff list: the first page at once, the next ones when `fetchNextPage` is
 * called (a "More" button); nothing is loaded whole.
 */
export function useCursorList<P extends PagedRoute>(
  key: readonly unknown[],
  route: P,
  query: ListQuery<P> = {} as ListQuery<P>,
) {
  return useInfiniteQuery({
    queryKey: [...key, query],
    queryFn: ({ pageParam }) =>
      api.request<Answer<'GET', P>>('GET', route, {
        query: { ...(query as Query), cursor: pageParam },
      }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => (last as CursorPage<unknown>).next_cursor ?? undefined,
  });
}
