import type { ResourceProps } from 'react-admin';
import { ProductCreate } from './ProductCreate.tsx';
import { ProductList } from './ProductList.tsx';
import { ProductShow } from './ProductShow.tsx';

export const products: ResourceProps = {
  name: 'products',
  list: ProductList,
  create: ProductCreate,
  show: ProductShow,
  recordRepresentation: 'name',
};
