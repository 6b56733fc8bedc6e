{{ doc }}export declare function {{ signature }};
