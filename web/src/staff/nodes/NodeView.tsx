/**
 * One node's page: its state (refreshing on its own, every second while it is being provisioned),
 * provisioning with its progress until `ready` or `failed` (the error in words), a forced restart,
 * deleting it, changing its settings, and its daily traffic.
 */
import {
  Alert,
  Anchor,
  Button,
  Card,
  Code,
  Group,
  Progress,
  SimpleGrid,
  Stack,
  Text,
  Title,
} from '@mantine/core';
import { useEffect, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useI18n } from '../../i18n/i18n';
import { useNotify } from '../../layout/notify';
import { Failed, Loading } from '../../layout/Loading';
import { ConfirmAction } from '../../layout/ConfirmAction';
import { useDateTime } from './dateTime';
import { NodeForm } from './NodeForm';
import {
  type Node,
  type UpdateNode,
  useDeleteNode,
  useNode,
  useProvisionNode,
  useRestartNode,
  useUpdateNode,
} from './queries';
import { ProvisionBadge, StatusBadge } from './badges';
import { TrafficChart } from './TrafficChart';

export function NodeView() {
  const { id = '' } = useParams();
  const { t } = useI18n();
  const node = useNode(id);

  return (
    <Stack>
      <Anchor component={Link} to="/staff/nodes">
        {t('console.nodes.back')}
      </Anchor>
      {node.isPending && <Loading />}
      {node.isError && <Failed error={node.error} retry={() => void node.refetch()} />}
      {node.data && <NodeDetails node={node.data} />}
    </Stack>
  );
}

function NodeDetails({ node }: { node: Node }) {
  const { t } = useI18n();
  const dateTime = useDateTime();
  const [editing, setEditing] = useState(false);

  const fact = (label: string, value: string) => (
    <div>
      <Text size="sm" c="gray.7">
        {label}
      </Text>
      <Text style={{ overflowWrap: 'anywhere' }}>{value}</Text>
    </div>
  );

  return (
    <Stack>
      <Card withBorder component="section" role="region" aria-labelledby="node-title">
        <Stack gap="sm">
          <Group justify="space-between">
            <Title order={2} id="node-title">
              {node.name}
            </Title>
            <Group gap={4}>
              <StatusBadge status={node.status} />
              <ProvisionBadge state={node.provision_state} />
            </Group>
          </Group>
          <SimpleGrid cols={{ base: 1, sm: 2, md: 3 }}>
            {fact(t('console.nodes.host'), node.host)}
            {fact(t('console.nodes.ssh'), `${node.ssh_user}@${node.host}:${node.ssh_port}`)}
            {fact(
              t('console.nodes.hostKey'),
              node.ssh_host_key_sha256 ?? t('console.nodes.notPinned'),
            )}
            {fact(
              t('console.nodes.tunnel'),
              `${node.tunnel_protocol} ${node.tunnel_host}:${node.tunnel_port} (${node.tunnel_flow})`,
            )}
            {fact(t('console.nodes.admissionPort'), String(node.admission_port))}
            {fact(t('console.nodes.sni'), node.sni_domain)}
            {fact(t('console.nodes.multiplier'), `× ${node.traffic_multiplier}`)}
            {fact(t('console.nodes.lastCheck'), dateTime(node.last_checked_at))}
            {fact(t('console.nodes.lastReport'), dateTime(node.last_report_at))}
            {fact(t('console.nodes.createdAt'), dateTime(node.created_at))}
          </SimpleGrid>
          {node.last_error && node.provision_state !== 'failed' && (
            <Alert color="red" title={t('console.nodes.lastError')} role="alert">
              <Code block>{node.last_error}</Code>
            </Alert>
          )}
        </Stack>
      </Card>

      <Provisioning node={node} />

      <Card withBorder component="section" role="region" aria-labelledby="node-settings-title">
        <Stack gap="sm">
          <Group justify="space-between">
            <Title order={2} size="h3" id="node-settings-title">
              {t('console.nodes.settings')}
            </Title>
            {!editing && (
              <Button variant="default" onClick={() => setEditing(true)}>
                {t('console.nodes.edit')}
              </Button>
            )}
          </Group>
          {editing ? (
            <EditNode node={node} done={() => setEditing(false)} />
          ) : (
            <Text size="sm" c="gray.7">
              {t('console.nodes.keyWriteOnly')}
            </Text>
          )}
        </Stack>
      </Card>

      <TrafficChart nodeId={node.id} />
    </Stack>
  );
}

function EditNode({ node, done }: { node: Node; done: () => void }) {
  const { t } = useI18n();
  const notify = useNotify();
  const update = useUpdateNode(node.id);
  return (
    <NodeForm
      node={node}
      busy={update.isPending}
      error={update.error}
      submit={(body) =>
        update.mutate(body as UpdateNode, {
          onSuccess: () => {
            notify(t('console.nodes.saved'), 'green');
            done();
          },
        })
      }
      onCancel={done}
    />
  );
}

/** Seconds since `running` became true, ticking each second while it stays true. */
function useElapsedSeconds(running: boolean): number {
  const [startedAt, setStartedAt] = useState<number | null>(null);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!running) {
      setStartedAt(null);
      return;
    }
    setStartedAt((at) => at ?? Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1_000);
    return () => clearInterval(timer);
  }, [running]);
  return startedAt === null ? 0 : Math.max(0, Math.round((now - startedAt) / 1000));
}

/** Provisioning, restart and delete, with the provisioning's progress and outcome. */
function Provisioning({ node }: { node: Node }) {
  const { t, errorText } = useI18n();
  const notify = useNotify();
  const navigate = useNavigate();
  const provision = useProvisionNode(node.id);
  const restart = useRestartNode(node.id);
  const remove = useDeleteNode(node.id);
  const running = node.provision_state === 'provisioning';
  const elapsed = useElapsedSeconds(running);

  return (
    <Card withBorder component="section" role="region" aria-labelledby="node-provisioning-title">
      <Stack gap="sm">
        <Title order={2} size="h3" id="node-provisioning-title">
          {t('console.nodes.provisioning')}
        </Title>
        <div role="status" aria-live="polite">
          {node.provision_state === 'new' && <Text>{t('console.nodes.progress.new')}</Text>}
          {running && (
            <Stack gap={6}>
              <Text>{t('console.nodes.progress.running', { seconds: elapsed })}</Text>
              <Progress
                value={100}
                striped
                animated
                aria-label={t('console.nodes.provision.provisioning')}
              />
            </Stack>
          )}
          {node.provision_state === 'ready' && (
            <Text fw={500}>{t('console.nodes.progress.ready')}</Text>
          )}
          {node.provision_state === 'failed' && (
            <Alert color="red" title={t('console.nodes.progress.failed')}>
              <Code block>{node.last_error ?? t('console.nodes.noError')}</Code>
            </Alert>
          )}
        </div>
        {provision.error != null && (
          <Alert color="red" role="alert">
            {errorText(provision.error)}
          </Alert>
        )}
        {restart.error != null && (
          <Alert color="red" role="alert">
            {errorText(restart.error)}
          </Alert>
        )}
        <Group>
          <Button
            loading={provision.isPending}
            disabled={running}
            onClick={() => provision.mutate()}
          >
            {node.provision_state === 'ready' || node.provision_state === 'failed'
              ? t('console.nodes.provisionAgain')
              : t('console.nodes.provisionStart')}
          </Button>
          <ConfirmAction
            label={t('console.nodes.restart')}
            question={t('console.nodes.restartQuestion', { name: node.name })}
            color="indigo"
            action={async () => {
              await restart.mutateAsync();
              notify(t('console.nodes.restartRequested', { name: node.name }));
            }}
          />
          <ConfirmAction
            label={t('console.nodes.delete')}
            question={t('console.nodes.deleteQuestion', { name: node.name, host: node.host })}
            action={async () => {
              await remove.mutateAsync();
              notify(t('console.nodes.deleted', { name: node.name }));
              await navigate('/staff/nodes');
            }}
          />
        </Group>
      </Stack>
    </Card>
  );
}
