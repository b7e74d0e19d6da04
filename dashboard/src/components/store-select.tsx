import type { Store } from '../types.js';

interface Props {
  id: string;
  label: string;
  stores: Store[];
  value: string;
  onChange(storeId: string): void;
  /** A first option for "no store" (e.g. `All stores`). */
  allLabel?: string;
}

export function StoreSelect({ id, label, stores, value, onChange, allLabel }: Props) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        {allLabel !== undefined && <option value="">{allLabel}</option>}
        {stores.map((store) => (
          <option key={store.id} value={store.id}>
            {store.name}
            {store.status === 'inactive' ? ' (inactive)' : ''}
          </option>
        ))}
      </select>
    </div>
  );
}
