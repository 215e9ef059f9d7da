# (installation rules: to be written)
