import { keyedFields, relatedModel } from '../../common/read-model';

/**
 * How a chain is read by the SQL plans (a row's `chain`): its key, Node id, name and native symbol. REST
 * shows its key as its `id`.
 */
export const CHAIN_READ = relatedModel(
  'Chain',
  'chains',
  'ch',
  {
    ...keyedFields('Chain', 'chainId'),
    name: { sql: 'name', kind: 'value' },
    symbol: { sql: 'symbol', kind: 'value' },
  },
  { rest: { shape: [{ field: 'chainId', as: 'id' }, 'name', 'symbol'], omits: ['id'] } },
);
