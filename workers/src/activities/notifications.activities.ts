/** Activities that read what to announce and mail it, recording each mail exactly once per key. */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { NotificationActivities, NotificationInput } from '@emporia/workflows/contracts';
import type { Mailer } from '@emporia/api/src/kit/mail.ts';
import { Member } from '@emporia/api/src/modules/organizations/entities.ts';
import { Product } from '@emporia/api/src/modules/products/entities.ts';
import { mailOnce } from './mail-once.ts';

function formatAmount(amount: number, currency: string): string {
  return `${currency.toUpperCase()} ${Math.trunc(amount / 100)}.${String(amount % 100).padStart(2, '0')}`;
}

export function createNotificationActivities({ orm, mailer }: { orm: MikroORM; mailer: Mailer }): NotificationActivities {
  return {
    async productAnnouncement(productId: string) {
      const em = orm.em.fork();
      const product = await em.findOne(Product, { id: productId }, { populate: ['organization', 'prices'] });
      if (!product) return null;
      const members = await em.find(Member, { organization: product.organization }, { populate: ['user'] });
      const price = product.prices.getItems()[0];
      const priceText =
        price?.amountType === 'fixed' && price.priceAmount != null
          ? formatAmount(price.priceAmount, price.priceCurrency)
          : price?.amountType === 'free'
            ? 'free'
            : 'pay what you want';
      return {
        organizationId: product.organization.id,
        recipients: members.map((m) => m.user.email).sort(),
        subject: `New product in ${product.organization.name}: ${product.name}`,
        text:
          `${product.name} is now available in ${product.organization.name} (${priceText}` +
          `${product.recurringInterval ? ` per ${product.recurringInterval}` : ''}).\n\nProduct id: ${product.id}\n`,
      };
    },

    /** Idempotent by dedupeKey: a retried activity whose row exists sends nothing twice. */
    async sendNotification(input: NotificationInput): Promise<{ messageId: string | null; skipped: boolean }> {
      return mailOnce(orm, mailer, input);
    },
  };
}

export type { NotificationActivities, NotificationInput };
