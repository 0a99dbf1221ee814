/**
 * Values the contract says are read from the environment on every request (`GET /config`), so an
 * operator can change them without a restart of the settings object.
 */
export function readPublicConfig(): { bot_username: string | null; grafana_url: string | null } {
  return {
    bot_username: nonEmpty(process.env.BOT_USERNAME),
    grafana_url: nonEmpty(process.env.GRAFANA_URL),
  };
}

function nonEmpty(value: string | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
}
