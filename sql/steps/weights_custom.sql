-- weights given on the command line (`report weights --weights 0.5,3`): the weight
-- projection of sft_weight_projection_v1 from the same base numbers, for those weights.
-- Parameter $1: the weights, comma-separated.
select
    w as weight,
    union_exposure,
    region_positions,
    union_exposure + w * region_positions as total,
    (1 + w) * region_positions as region,
    (1 + w) * region_positions / nullif(union_exposure + w * region_positions, 0) as region_share
from (select distinct union_exposure, region_positions from sft_weight_projection_v1),
     unnest(cast(string_split($1, ',') as double[])) as t(w)
