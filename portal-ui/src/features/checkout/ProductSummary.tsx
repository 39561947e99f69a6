/** What is being bought: description, media, included benefits, and a price's label. */
import { formatMoney, formatRecurring } from '../../lib/format.ts';
import type { Benefit, Price, Product } from '../../lib/types.ts';

export function PriceLabel({ price }: { price: Price }) {
  const interval = price.type === 'recurring' ? price.recurring_interval : null;
  switch (price.amount_type) {
    case 'fixed':
      return <>{formatRecurring(price.price_amount, price.price_currency, interval)}</>;
    case 'free':
      return <>Free{interval ? ` / ${interval}` : ''}</>;
    case 'custom':
      return <>{price.minimum_amount ? `From ${formatMoney(price.minimum_amount, price.price_currency)}` : 'Pay what you want'}</>;
    case 'metered_unit':
      return <>{formatMoney(price.unit_amount, price.price_currency)} per unit</>;
  }
}

export function benefitLabel(b: Benefit): string {
  const kind: Record<string, string> = {
    license_keys: 'License key',
    downloadables: 'Downloads',
    github_repository: 'GitHub repository access',
    discord: 'Discord access',
    custom: '',
    meter_credit: 'Usage credits',
  };
  return b.description || kind[b.type] || b.type;
}

export function ProductSummary({ product }: { product: Product }) {
  const images = product.medias.filter((m) => m.public_url && (!m.mime_type || m.mime_type.startsWith('image/')));
  return (
    <div className="product">
      {images.length > 0 && (
        <div className="media">
          {images.slice(0, 4).map((m) => (
            <img key={m.id} src={m.public_url!} alt={m.name} loading="lazy" />
          ))}
        </div>
      )}
      {product.description && <p className="description">{product.description}</p>}
      {product.benefits.length > 0 && (
        <div className="includes">
          <h2 className="h3">Included</h2>
          <ul>
            {product.benefits.map((b) => (
              <li key={b.id}>{benefitLabel(b)}</li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}
