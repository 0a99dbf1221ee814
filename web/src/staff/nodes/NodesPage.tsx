/**
 * The console's Nodes page (node_manage: the owner, or a moderator given node access): the list of
 * nodes with their state, refreshing on its own; a form for a new node; each node's own page
 * (./NodeView) under /staff/nodes/<id>.
 */
import { Anchor, Button, Card, Group, Stack, Text, Title } from '@mantine/core';
import { Link, Route, Routes, useNavigate } from 'react-router';
import { useI18n } from '../../i18n/i18n';
import { type Column, DataTable } from '../../layout/DataTable';
import { Failed, Loading } from '../../layout/Loading';
import { NodeForm } from './NodeForm';
import { NodeView } from './NodeView';
import { type CreateNode, type Node, useCreateNode, useNodeList } from './queries';
import { ProvisionBadge, StatusBadge } from './badges';
import { useDateTime } from './dateTime';
import { CursorMore } from '../shared/ListControls';

export function NodesPage() {
  return (
    <Routes>
      <Route index element={<NodeList />} />
      <Route path="new" element={<NewNode />} />
      <Route path=":id" element={<NodeView />} />
    </Routes>
  );
}

function NodeList() {
  const { t, language } = useI18n();
  const dateTime = useDateTime();
  const list = useNodeList();
  const clock = new Intl.DateTimeFormat(language === 'ru' ? 'ru-RU' : 'en-GB', {
    timeStyle: 'medium',
  });
  const nodes = list.data?.pages.flatMap((page) => page.items) ?? [];
  const columns: Column<Node>[] = [
    {
      header: t('console.nodes.name'),
      cell: (node) => (
        <Anchor component={Link} to={node.id}>
          {node.name}
        </Anchor>
      ),
    },
    { header: t('console.nodes.host'), cell: (node) => node.host, breakAll: true },
    {
      header: t('console.nodes.state'),
      cell: (node) => (
        <Stack gap={4} align="flex-start">
          <StatusBadge status={node.status} />
          <ProvisionBadge state={node.provision_state} />
        </Stack>
      ),
    },
    { header: t('console.nodes.lastCheck'), cell: (node) => dateTime(node.last_checked_at) },
    { header: t('console.nodes.lastReport'), cell: (node) => dateTime(node.last_report_at) },
    {
      header: t('console.nodes.lastError'),
      cell: (node) => (
        <Text size="sm" c={node.last_error ? 'red.8' : undefined} lineClamp={2}>
          {node.last_error ?? '—'}
        </Text>
      ),
    },
  ];

  return (
    <Card withBorder component="section" role="region" aria-labelledby="nodes-title">
      <Stack gap="sm">
        <Group justify="space-between">
          <Title order={2} id="nodes-title">
            {t('console.nodes.title')}
          </Title>
          <Button component={Link} to="new">
            {t('console.nodes.add')}
          </Button>
        </Group>
        {list.isPending && <Loading />}
        {list.isError && <Failed error={list.error} retry={() => void list.refetch()} />}
        {list.data && nodes.length === 0 && <Text>{t('console.nodes.none')}</Text>}
        {nodes.length > 0 && (
          <DataTable columns={columns} rows={nodes} rowKey={(node) => node.id} minWidth={760} />
        )}
        <CursorMore list={list} />
        {list.dataUpdatedAt > 0 && (
          <Text size="sm" c="gray.7">
            {t('console.nodes.refreshed', {
              time: clock.format(list.dataUpdatedAt),
            })}
          </Text>
        )}
      </Stack>
    </Card>
  );
}

function NewNode() {
  const { t } = useI18n();
  const navigate = useNavigate();
  const create = useCreateNode();
  return (
    <Card withBorder component="section" role="region" aria-labelledby="new-node-title">
      <Stack gap="sm">
        <Title order={2} id="new-node-title">
          {t('console.nodes.new')}
        </Title>
        <NodeForm
          busy={create.isPending}
          error={create.error}
          submit={(body) =>
            create.mutate(body as CreateNode, {
              onSuccess: (node) => void navigate(`/staff/nodes/${node.id}`),
            })
          }
          onCancel={() => void navigate('/staff/nodes')}
        />
      </Stack>
    </Card>
  );
}
