import { useInfiniteQuery } from '@tanstack/react-query';
import type { components } from '../../../client/src/schema';
import { api, type HttpMethod } from '../api/client';

/** The service's own shapes, by their OpenAPI names (client/src/schema.d.ts). */
export type Schemas = components['schemas'];

type Query = Record<string, string | number | boolean | null | undefined>;

/** One staff route, with the app's session rule (refresh once on 401). Paths are under /api/v1. */
export function staffCall<T>(
  method: HttpMethod,
  path: string,
  options: { body?: unknown; query?: Query } = {},
): Promise<T> {
  return api.request<T>(method, path, options);
}

/** A page of a cursor-paged list, as every paged route of the service answers. */
export interface CursorPage<T> {
  items: T[];
  next_cursor: string | null;
}

/**
 * A cursor-paged staff list: the first page at once, the next ones when `fetchNextPage` is
 * called (a "More" button); nothing is loaded whole.
 */
export function useCursorList<T>(key: readonly unknown[], path: string, query: Query = {}) {
  return useInfiniteQuery({
    queryKey: [...key, query],
    queryFn: ({ pageParam }) =>
      staffCall<CursorPage<T>>('GET', path, { query: { ...query, cursor: pageParam } }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
}
