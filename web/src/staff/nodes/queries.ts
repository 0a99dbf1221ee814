/**
 * The console's calls for nodes: the list and a node refreshing on their own (a node's state moves
 * in the background: health checks, traffic reports, provisioning), its daily traffic, and the
 * changes staff make. Every change refreshes what it touched.
 */
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type Schemas, staffCall } from '../api';

export type Node = Schemas['NodeResponse'];
export type CreateNode = Schemas['CreateNodeRequest'];
export type UpdateNode = Schemas['UpdateNodeRequest'];
export type NodeTrafficDay = Schemas['NodeTrafficDayResponse'];

/** How often the list asks again: health checks run every minute by default. */
export const LIST_REFRESH_MS = 5_000;
/** How often a node being provisioned is asked again, so its progress shows at once. */
const PROVISIONING_REFRESH_MS = 1_000;
const NODE_REFRESH_MS = 5_000;

export const nodeKeys = {
  list: ['staff', 'nodes'] as const,
  detail: (id: string) => ['staff', 'node', id] as const,
  traffic: (id: string, days: number) => [...nodeKeys.detail(id), 'traffic', days] as const,
};

/**
 * The nodes, oldest first, a page at a time. Like `useCursorList`, with a refresh of the pages
 * already loaded every LIST_REFRESH_MS.
 */
export function useNodeList() {
  return useInfiniteQuery({
    queryKey: nodeKeys.list,
    queryFn: ({ pageParam }) => staffCall('GET', '/admin/nodes', { query: { cursor: pageParam } }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next_cursor ?? undefined,
    refetchInterval: LIST_REFRESH_MS,
  });
}

/** One node; asked every second while it is being provisioned. */
export function useNode(id: string) {
  return useQuery({
    queryKey: nodeKeys.detail(id),
    queryFn: () => staffCall('GET', '/admin/nodes/{id}', { path: { id } }),
    refetchInterval: (query) =>
      query.state.data?.provision_state === 'provisioning'
        ? PROVISIONING_REFRESH_MS
        : NODE_REFRESH_MS,
  });
}

export function useNodeTraffic(id: string, days: number) {
  return useQuery({
    queryKey: nodeKeys.traffic(id, days),
    queryFn: () => staffCall('GET', '/admin/nodes/{id}/traffic', { path: { id }, query: { days } }),
    refetchInterval: 60_000,
  });
}

export function useCreateNode() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: CreateNode) => staffCall('POST', '/admin/nodes', { body }),
    onSuccess: (node) => {
      client.setQueryData(nodeKeys.detail(node.id), node);
      return client.invalidateQueries({ queryKey: nodeKeys.list });
    },
  });
}

export function useUpdateNode(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: UpdateNode) =>
      staffCall('PATCH', '/admin/nodes/{id}', { path: { id }, body }),
    onSuccess: (node) => {
      client.setQueryData(nodeKeys.detail(id), node);
      return client.invalidateQueries({ queryKey: nodeKeys.list });
    },
  });
}

/** Starts a provisioning (202); the node then reads `provisioning` until the work ends. */
export function useProvisionNode(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => staffCall('POST', '/admin/nodes/{id}/provision', { path: { id } }),
    onSuccess: (accepted) => {
      client.setQueryData<Node>(nodeKeys.detail(id), (node) =>
        node ? { ...node, provision_state: accepted.provision_state, last_error: null } : node,
      );
      return client.invalidateQueries({ queryKey: ['staff'] as const });
    },
  });
}

/** Asks for a forced restart (202); a failure shows later in the node's `last_error`. */
export function useRestartNode(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => staffCall('POST', '/admin/nodes/{id}/restart', { path: { id } }),
    onSuccess: () => client.invalidateQueries({ queryKey: nodeKeys.detail(id) }),
  });
}

export function useDeleteNode(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => staffCall('DELETE', '/admin/nodes/{id}', { path: { id } }),
    onSuccess: () => {
      client.removeQueries({ queryKey: nodeKeys.detail(id) });
      return client.invalidateQueries({ queryKey: nodeKeys.list });
    },
  });
}
