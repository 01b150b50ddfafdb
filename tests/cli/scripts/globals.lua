-- Says whether the script can reach the operating system.
print("os is " .. type(os) .. ", io is " .. type(io))
