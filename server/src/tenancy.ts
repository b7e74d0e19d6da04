/** Who is asking: an account, in live or test mode. Every data access is scoped by both. */
export interface Tenant {
  accountId: string;
  livemode: boolean;
}

export const modeFlag = (tenant: Tenant): number => (tenant.livemode ? 1 : 0);
