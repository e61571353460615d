/** Under the customer's key, so a change to the customer refreshes it too. */
export const backupTargetKey = (customerId: string) => ['customers', customerId, 'backup-target'] as const;
