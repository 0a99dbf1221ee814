import { Alert, Button, Card, Group, Select, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useEffect, useState } from 'react';
import { useLocation, useNavigate } from 'react-router';
import type { Invoice, PaymentMethod, Plan } from '../api/client';
import { isStaffRole, useConfig, useCreateInvoice, useMe, usePlans } from '../api/hooks';
import { arrivedAfterSignIn, sendBackAfterSignIn } from '../auth/after-sign-in';
import { type Language, useI18n } from '../i18n/i18n';
import { Failed, Loading } from '../layout/Loading';
import { InvoiceDialog } from './InvoiceDialog';

export function PlansPage() {
  const { t } = useI18n();
  const plans = usePlans();
  const config = useConfig();
  const me = useMe();
  const [invoice, setInvoice] = useState<Invoice | null>(null);
  const { hash } = useLocation();
  const signedIn = Boolean(me.data);
  const shown = Boolean(plans.data);
  // A buyer back from signing in: at the plan it chose (`#plan-<name>`).
  useEffect(() => {
    if (!signedIn || !shown) return;
    arrivedAfterSignIn();
    if (hash) document.getElementById(decodeURIComponent(hash.slice(1)))?.scrollIntoView();
  }, [signedIn, shown, hash]);
  if (plans.isPending || config.isPending) return <Loading />;
  if (plans.isError) return <Failed error={plans.error} retry={() => void plans.refetch()} />;
  if (config.isError) return <Failed error={config.error} retry={() => void config.refetch()} />;
  const methods = config.data.payment_methods;
  return (
    <Stack>
      <Title order={1}>{t('plans.title')}</Title>
      {plans.data.length === 0 && <Text>{t('plans.none')}</Text>}
      {plans.data.length > 0 && methods.length === 0 && (
        // Buttons that could only fail are not shown; staff are told what to set.
        <Alert color="gray" role="status" title={t('plans.noPayment')}>
          {me.data && isStaffRole(me.data.role) ? t('plans.noPaymentStaff') : null}
        </Alert>
      )}
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }}>
        {plans.data.map((plan) => (
          <PlanCard key={plan.name} plan={plan} methods={methods} onInvoice={setInvoice} />
        ))}
      </SimpleGrid>
      <InvoiceDialog invoice={invoice} onClose={() => setInvoice(null)} />
    </Stack>
  );
}

/** Where the currency a buyer picked is remembered, for every plan and later visits. */
const CURRENCY_KEY = 'vpn-currency';

function pickedCurrency(): string | null {
  try {
    return localStorage.getItem(CURRENCY_KEY);
  } catch {
    return null; // Storage blocked: the language decides.
  }
}

function rememberCurrency(code: string): void {
  try {
    localStorage.setItem(CURRENCY_KEY, code);
  } catch {
    // Not remembered across visits; the choice still holds on this page.
  }
}

/** The currency shown first: the one the buyer picked, else RUB in Russian and USD otherwise. */
export function defaultCurrency(
  fiat: readonly string[],
  language: Language,
  picked: string | null,
): string | null {
  const preferred = [picked, language === 'ru' ? 'RUB' : 'USD'];
  return preferred.find((code) => code !== null && fiat.includes(code)) ?? fiat[0] ?? null;
}

function PlanCard({
  plan,
  methods,
  onInvoice,
}: {
  plan: Plan;
  /** The ways of paying the service has set up (`GET /config`): only these get a button. */
  methods: PaymentMethod[];
  onInvoice: (invoice: Invoice) => void;
}) {
  const { t, money, bytes, errorText, language } = useI18n();
  const me = useMe();
  const navigate = useNavigate();
  const create = useCreateInvoice();
  const fiat = Object.keys(plan.prices).filter((code) => code !== 'XTR');
  const [picked, setPicked] = useState<string | null>(pickedCurrency);
  const currency = defaultCurrency(fiat, language, picked);
  const titleId = `plan-${plan.name}`;
  const display = plan.display[language];

  function pick(code: string | null) {
    if (code === null) return;
    rememberCurrency(code);
    setPicked(code);
  }

  function buy(provider: 'ton' | 'telegram', code: string | null) {
    if (!me.data) {
      sendBackAfterSignIn({ path: `/plans#${titleId}`, plan: display?.name ?? plan.name });
      void navigate('/');
      return;
    }
    if (!code) return;
    create.mutate({ plan_name: plan.name, currency: code, provider }, { onSuccess: onInvoice });
  }

  return (
    <Card withBorder component="section" aria-labelledby={titleId}>
      <Stack gap="xs">
        <Title order={2} size="h3" id={titleId}>
          {display?.name ?? plan.name}
        </Title>
        {display?.description && <Text c="dimmed">{display.description}</Text>}
        <Text>{t('plans.days', { days: plan.duration_days })}</Text>
        <Text>{t('plans.traffic', { traffic: bytes(plan.traffic_limit_bytes) })}</Text>
        <Text fw={700} size="lg">
          {Object.entries(plan.prices)
            .map(([code, amount]) => money(amount, code))
            .join(' · ')}
        </Text>
        {fiat.length > 1 && (methods.includes('ton') || methods.includes('telegram')) && (
          <Select
            label={t('plans.currency')}
            data={fiat}
            value={currency}
            onChange={pick}
            allowDeselect={false}
          />
        )}
        <Group>
          {fiat.length > 0 && methods.includes('ton') && (
            <Button loading={create.isPending} onClick={() => buy('ton', currency)}>
              {t('plans.payTon')}
            </Button>
          )}
          {fiat.length > 0 && methods.includes('telegram') && (
            <Button variant="light" onClick={() => buy('telegram', currency)}>
              {t('plans.payTelegram')}
            </Button>
          )}
          {'XTR' in plan.prices && methods.includes('stars') && (
            <Button variant="light" onClick={() => buy('telegram', 'XTR')}>
              {t('plans.payStars')}
            </Button>
          )}
        </Group>
        {create.isError && (
          <Alert color="red" role="alert">
            {errorText(create.error)}
          </Alert>
        )}
      </Stack>
    </Card>
  );
}
