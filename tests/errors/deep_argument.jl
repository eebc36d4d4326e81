# trace: -f f x
# An entry argument nested 10^5 deep: more than the 1000 levels ytape walks.
x = 1.0; for i in 1:100000; global x = (x,); end
f(x) = 1.0
