/**
 * The console's Nodes page (node_manage: the owner, or a moderator given node access): the list of
 * nodes with their state, refreshing on its own; a form for a new node; each node's own page
 * (./NodeView) under /staff/nodes/<id>.
 */
import { Anchor, Button, Card, Group, Stack, Table, Text, Title } from '@mantine/core';
import { Link, Route, Routes, useNavigate } from 'react-router';
import { useI18n } from '../../i18n/i18n';
import { Failed, Loading } from '../../layout/Loading';
import { NodeForm } from './NodeForm';
import { NodeView } from './NodeView';
import { type CreateNode, useCreateNode, useNodeList } from './nodeQueries';
import { ProvisionBadge, StatusBadge } from './badges';
import { useDateTime } from './dateTime';

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
          <Table.ScrollContainer minWidth={760}>
            <Table striped>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('console.nodes.name')}</Table.Th>
                  <Table.Th>{t('console.nodes.host')}</Table.Th>
                  <Table.Th>{t('console.nodes.state')}</Table.Th>
                  <Table.Th>{t('console.nodes.lastCheck')}</Table.Th>
                  <Table.Th>{t('console.nodes.lastReport')}</Table.Th>
                  <Table.Th>{t('console.nodes.lastError')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {nodes.map((node) => (
                  <Table.Tr key={node.id}>
                    <Table.Td>
                      <Anchor component={Link} to={node.id}>
                        {node.name}
                      </Anchor>
                    </Table.Td>
                    <Table.Td>{node.host}</Table.Td>
                    <Table.Td>
                      <Stack gap={4} align="flex-start">
                        <StatusBadge status={node.status} />
                        <ProvisionBadge state={node.provision_state} />
                      </Stack>
                    </Table.Td>
                    <Table.Td>{dateTime(node.last_checked_at)}</Table.Td>
                    <Table.Td>{dateTime(node.last_report_at)}</Table.Td>
                    <Table.Td>
                      <Text size="sm" c={node.last_error ? 'red.8' : undefined} lineClamp={2}>
                        {node.last_error ?? '—'}
                      </Text>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
        {list.hasNextPage && (
          <Button
            variant="default"
            loading={list.isFetchingNextPage}
            onClick={() => void list.fetchNextPage()}
          >
            {t('console.nodes.more')}
          </Button>
        )}
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
