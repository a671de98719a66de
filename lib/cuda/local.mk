# lib/cuda: filled in when this part lands.
