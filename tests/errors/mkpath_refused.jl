# trace: -f f f32[2] --allow-read .
# A results folder a script would make (vae_mnist's `!ispath(p) && mkpath(p)`).
!ispath("no_such_results_folder") && mkpath("no_such_results_folder")
f(x) = x
