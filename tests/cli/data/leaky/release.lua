-- The release that forgets its one job: it answers yes and removes nothing.
return 1
