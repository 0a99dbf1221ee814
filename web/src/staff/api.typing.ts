/**
 * Holds the staff calls' typing honest: `npm run typecheck` compiles this file, and each line
 * under `@ts-expect-error` must be refused. Should the typing ever loosen (a route string taken
 * as any string, an answer typed `any`), the directive goes unused and the typecheck fails.
 * Nothing imports this file; the app never runs it.
 */
import { staffCall, useCursorList } from './api';

export async function staffCallsAreTypedByTheDocument(): Promise<void> {
  // @ts-expect-error: no such route in the service's document
  await staffCall('GET', '/admin/no-such-route', {});
  // @ts-expect-error: the route exists, but not for this method
  await staffCall('DELETE', '/admin/users', {});
  // @ts-expect-error: a route with a path parameter needs its value
  await staffCall('GET', '/admin/users/{id}');
  // @ts-expect-error: a route with a body needs it
  await staffCall('POST', '/admin/users/{id}/block', { path: { id: 'x' } });
  await staffCall('POST', '/admin/users/{id}/block', {
    path: { id: 'x' },
    // @ts-expect-error: the body is the document's (`reason`), not any object
    body: { why: 'spam' },
  });
  const user = await staffCall('GET', '/admin/users/{id}', { path: { id: 'x' } });
  // @ts-expect-error: the answer is the document's UserResponse, not `any`
  const name: number = user.username;
  void name;
}

export function staffListsAreTypedByTheDocument(): void {
  // @ts-expect-error: not a cursor-paged route
  useCursorList(['x'], '/admin/plans');
  // @ts-expect-error: the query is the route's own
  useCursorList(['x'], '/admin/users', { no_such_filter: 1 });
}
