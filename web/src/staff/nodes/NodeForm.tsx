/**
 * The form of a node's settings, for creating one and for changing one. The SSH private key is
 * write-only: the service never sends it back, so the form of an existing node starts it empty
 * and sends it only when staff paste a new one.
 */
import {
  Alert,
  Button,
  Group,
  NumberInput,
  SimpleGrid,
  Stack,
  Textarea,
  TextInput,
} from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { useI18n } from '../../i18n/i18n';
import type { CreateNode, Node, UpdateNode } from './queries';

interface Values {
  name: string;
  host: string;
  ssh_port: number | string;
  ssh_user: string;
  ssh_private_key: string;
  ssh_host_key_sha256: string;
  tunnel_port: number | string;
  admission_port: number | string;
  sni_domain: string;
  traffic_multiplier: number | string;
}

/** The service's own defaults (CreateNodeRequest), shown filled in. */
const NEW_NODE: Values = {
  name: '',
  host: '',
  ssh_port: 22,
  ssh_user: 'root',
  ssh_private_key: '',
  ssh_host_key_sha256: '',
  tunnel_port: 443,
  admission_port: 8443,
  sni_domain: '',
  traffic_multiplier: 1,
};

function valuesOf(node: Node): Values {
  return {
    name: node.name,
    host: node.host,
    ssh_port: node.ssh_port,
    ssh_user: node.ssh_user,
    ssh_private_key: '',
    ssh_host_key_sha256: node.ssh_host_key_sha256 ?? '',
    tunnel_port: node.tunnel_port,
    admission_port: node.admission_port,
    sni_domain: node.sni_domain,
    traffic_multiplier: node.traffic_multiplier,
  };
}

/** A number input's value as the service expects it; an emptied field is sent as it is, and refused. */
const num = (value: number | string): number => (value === '' ? NaN : Number(value));

/** The create body: every field, an unset host key left out (the first key seen is recorded). */
function createBody(values: Values): CreateNode {
  const fingerprint = values.ssh_host_key_sha256.trim();
  return {
    name: values.name.trim(),
    host: values.host.trim(),
    ssh_port: num(values.ssh_port),
    ssh_user: values.ssh_user.trim(),
    ssh_private_key: values.ssh_private_key,
    ...(fingerprint ? { ssh_host_key_sha256: fingerprint } : {}),
    tunnel_port: num(values.tunnel_port),
    admission_port: num(values.admission_port),
    sni_domain: values.sni_domain.trim(),
    traffic_multiplier: num(values.traffic_multiplier),
  };
}

/**
 * The PATCH body: only what changed. An emptied host key forgets the pinned one (null); a key
 * pasted replaces the stored one.
 */
function changes(before: Values, after: Values): UpdateNode {
  const body: Record<string, unknown> = {};
  const full = createBody(after) as unknown as Record<string, unknown>;
  for (const field of Object.keys(before) as (keyof Values)[]) {
    if (field === 'ssh_private_key' || field === 'ssh_host_key_sha256') continue;
    if (String(before[field]).trim() !== String(after[field]).trim()) body[field] = full[field];
  }
  if (after.ssh_private_key.trim() !== '') body.ssh_private_key = after.ssh_private_key;
  const fingerprint = after.ssh_host_key_sha256.trim();
  if (fingerprint !== before.ssh_host_key_sha256) body.ssh_host_key_sha256 = fingerprint || null;
  return body as UpdateNode;
}

/** Creates a node (`node` absent) or changes one; `submit` gets the create or PATCH body. */
export function NodeForm({
  node,
  submit,
  busy,
  error,
  onCancel,
}: {
  node?: Node;
  submit: (body: CreateNode | UpdateNode) => void;
  busy: boolean;
  error: unknown;
  onCancel?: () => void;
}) {
  const { t, errorText } = useI18n();
  const initial = node ? valuesOf(node) : NEW_NODE;
  const [values, setValues] = useState<Values>(initial);
  const set =
    <K extends keyof Values>(field: K) =>
    (value: Values[K]) =>
      setValues((current) => ({ ...current, [field]: value }));
  const text = (field: keyof Values) => ({
    value: values[field] as string,
    onChange: (event: { currentTarget: { value: string } }) =>
      set(field)(event.currentTarget.value),
  });

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    submit(node ? changes(initial, values) : createBody(values));
  }

  return (
    <form onSubmit={onSubmit} aria-label={node ? t('console.nodes.edit') : t('console.nodes.new')}>
      <Stack gap="sm">
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          <TextInput label={t('console.nodes.name')} required maxLength={100} {...text('name')} />
          <TextInput
            label={t('console.nodes.host')}
            description={t('console.nodes.hostHint')}
            required
            maxLength={253}
            {...text('host')}
          />
          <NumberInput
            label={t('console.nodes.sshPort')}
            required
            min={1}
            max={65535}
            allowDecimal={false}
            value={values.ssh_port}
            onChange={set('ssh_port')}
          />
          <TextInput
            label={t('console.nodes.sshUser')}
            required
            maxLength={32}
            {...text('ssh_user')}
          />
        </SimpleGrid>
        <Textarea
          label={t('console.nodes.sshPrivateKey')}
          description={
            node ? t('console.nodes.sshPrivateKeyKeep') : t('console.nodes.sshPrivateKeyHint')
          }
          required={!node}
          autosize
          minRows={3}
          maxRows={8}
          autoComplete="off"
          spellCheck={false}
          styles={{ input: { fontFamily: 'monospace' } }}
          {...text('ssh_private_key')}
        />
        <TextInput
          label={t('console.nodes.hostKey')}
          description={t('console.nodes.hostKeyHint')}
          placeholder="SHA256:…"
          spellCheck={false}
          {...text('ssh_host_key_sha256')}
        />
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          <NumberInput
            label={t('console.nodes.tunnelPort')}
            required
            min={1}
            max={65535}
            allowDecimal={false}
            value={values.tunnel_port}
            onChange={set('tunnel_port')}
          />
          <NumberInput
            label={t('console.nodes.admissionPort')}
            description={t('console.nodes.admissionPortHint')}
            required
            min={1}
            max={65535}
            allowDecimal={false}
            value={values.admission_port}
            onChange={set('admission_port')}
          />
          <TextInput
            label={t('console.nodes.sni')}
            description={t('console.nodes.sniHint')}
            required
            maxLength={253}
            {...text('sni_domain')}
          />
          <NumberInput
            label={t('console.nodes.multiplier')}
            description={t('console.nodes.multiplierHint')}
            required
            min={0.1}
            max={10}
            step={0.1}
            decimalScale={3}
            value={values.traffic_multiplier}
            onChange={set('traffic_multiplier')}
          />
        </SimpleGrid>
        {error != null && (
          <Alert color="red" role="alert">
            {errorText(error)}
          </Alert>
        )}
        <Group justify="flex-end">
          {onCancel && (
            <Button variant="default" onClick={onCancel}>
              {t('staff.cancel')}
            </Button>
          )}
          <Button type="submit" loading={busy}>
            {node ? t('console.nodes.save') : t('console.nodes.create')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
