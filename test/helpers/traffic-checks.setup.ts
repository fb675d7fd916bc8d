import { checkCapturedTrafficAfterAll } from './traffic-checks';

checkCapturedTrafficAfterAll();
